//! What a backend's answer teaches: a request whose only credential is one value of a source
//! the backend proves, on a route where the backend checks it, is a [`Lesson`]; its answer's
//! `proof_header` (`valid` / `invalid`) or else its status proves or refuses the value.

use super::book::Verdict;
use super::proofs::Proofs;
use super::settings::{BackendProof, By};
use crate::identity::{Identity, Request, Source};
use crate::policy::RouteFacts;
use http::header::AUTHORIZATION;
use http::{HeaderMap, Method};

/// A request whose answer may prove or refuse its credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lesson {
    /// The verified source's place.
    pub index: usize,
    /// The value's digest.
    pub identity: Identity,
    /// Whether a success proves it (never from `HEAD` or `OPTIONS`, which many servers answer
    /// without checking anything).
    pub may_prove: bool,
}

impl Proofs {
    /// The lesson `req` (on `route`) may give: none when it carried no credential of a source
    /// the backend proves, or another credential beside it (another verified source, an
    /// `Authorization` header), or a credential twice, or when its route is not one where the
    /// backend checks the value.
    pub fn lesson(&self, req: &Request<'_>, route: &RouteFacts<'_>) -> Option<Lesson> {
        let credentials = req.credentials();
        let ([only], None) = (credentials.found.as_slice(), credentials.ambiguous) else {
            return None;
        };
        let verified = self.verified(only.index);
        let By::Backend(backend) = &verified.by else {
            return None;
        };
        if another_credential(req.headers, &verified.source) || !in_scope(backend, req, route) {
            return None;
        }
        let may_prove = route.method != Method::HEAD && route.method != Method::OPTIONS;
        Some(Lesson {
            index: only.index,
            identity: only.identity,
            may_prove,
        })
    }

    /// Learns from the answer to `lesson`'s request (its final `status` and `headers`),
    /// telling the fleet of what changed.
    pub fn learn(&self, lesson: &Lesson, status: u16, headers: &HeaderMap) {
        let By::Backend(backend) = &self.verified(lesson.index).by else {
            return;
        };
        let Some(verdict) = verdict(backend, status, headers) else {
            return;
        };
        if verdict == Verdict::Proven && !lesson.may_prove {
            return;
        }
        let Some(book) = self.book(lesson.index) else {
            return;
        };
        let now = self.keeper().clock().now_ms();
        let remember = backend.remember.as_millis() as u64;
        if let Some(change) = book.learn(lesson.identity, verdict, now, remember) {
            self.keeper().tell(change, self.tag(lesson.index));
        }
    }

    /// The headers the backend states proofs in: never passed on to a client.
    pub fn proof_headers(&self) -> impl Iterator<Item = &http::HeaderName> {
        (0..self.len()).filter_map(|index| match &self.verified(index).by {
            By::Backend(backend) => backend.proof_header.as_ref(),
            By::List(_) => None,
        })
    }
}

/// What an answer says of the value: the `proof_header` wins, then the status.
fn verdict(backend: &BackendProof, status: u16, headers: &HeaderMap) -> Option<Verdict> {
    let said = backend
        .proof_header
        .as_ref()
        .and_then(|name| headers.get(name));
    match said.as_ref().map(|v| v.as_bytes().trim_ascii()) {
        Some(v) if v.eq_ignore_ascii_case(b"valid") => return Some(Verdict::Proven),
        Some(v) if v.eq_ignore_ascii_case(b"invalid") => return Some(Verdict::Refused),
        _ => {}
    }
    if backend.proven_status.contains(status) {
        Some(Verdict::Proven)
    } else if backend.refused_status.contains(status) {
        Some(Verdict::Refused)
    } else {
        None
    }
}

/// Whether the request carries a credential the backend might have accepted instead of
/// `source`'s value: an `Authorization` header (unless that is the source).
fn another_credential(headers: &HeaderMap, source: &Source) -> bool {
    let is_authorization = matches!(source, Source::Header(name) if name == AUTHORIZATION);
    !is_authorization && headers.contains_key(AUTHORIZATION)
}

/// Whether the backend checks the value on `route` (everywhere, without a `match`).
fn in_scope(backend: &BackendProof, req: &Request<'_>, route: &RouteFacts<'_>) -> bool {
    backend
        .scope
        .as_ref()
        .is_none_or(|scope| scope.route.matches(route) && scope.conditions.hold(req))
}
