//! Which credentials a request carried are proven: the seam between the identity chain and
//! whatever knows (`proof/`, from the backend's answers or a key list). A source named in
//! `[identity.verify]` names a caller only once its value is proven; until then the chain goes
//! on to its next source, so a value a client invents shares the bucket of its address.

use super::source::Source;
use super::{Identity, Request, TokenState};
use smallvec::SmallVec;
use std::fmt;
use std::sync::{Arc, LazyLock};

/// What is known of one value of a verified source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProofState {
    /// The backend accepted it (or the key list holds it): it names a caller.
    Proven,
    /// Nothing is known of it: it names no one.
    Unproven,
    /// The backend accepted it once and refuses it now: it names no one.
    Refused,
}

impl ProofState {
    /// Every state, in the order the metric and the docs list them.
    pub const ALL: [ProofState; 3] = [Self::Proven, Self::Unproven, Self::Refused];

    /// The word logs, labels and records use.
    pub fn word(self) -> &'static str {
        match self {
            Self::Proven => "proven",
            Self::Unproven => "unproven",
            Self::Refused => "refused",
        }
    }
}

impl fmt::Display for ProofState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// What knows which values are proven: the sources that must be, and each value's state.
pub trait Provenance: Send + Sync {
    /// The sources that must be proven (`[identity.verify]`), each a single part.
    fn verified(&self) -> &[Source];

    /// The `index`th verified source as written (`header:x-api-key`).
    fn name(&self, index: usize) -> &Arc<str>;

    /// The state of `value`, the raw value that the `index`th verified source read, and its
    /// digest (what the state is kept under).
    fn state(&self, index: usize, value: &[u8]) -> (ProofState, Identity);

    /// As [`Provenance::state`], for an operator's question: nothing is counted or asked.
    fn peek(&self, index: usize, value: &[u8]) -> (ProofState, Identity);

    /// Whether `credential` (a refused one, under `refused = "reject"`) is refused at the
    /// edge now; false for the one request of it that goes through now and then.
    fn rejects(&self, credential: &Credential) -> bool;
}

/// What the verified parts of an identity source showed in a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PartsProof {
    /// None of its parts is verified.
    NoneVerified,
    /// Every verified part carried a proven value; the digest of (the last) one, which is the
    /// source's own digest when it is that part alone.
    Proven(Identity),
    /// A verified part carried no value, or one not proven: the source names no one.
    Unproven,
}

/// One verified source's value in a request: which source, its state and digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Credential {
    /// Its place in [`Provenance::verified`].
    pub index: usize,
    /// What is known of it.
    pub state: ProofState,
    /// The digest of its value.
    pub identity: Identity,
}

/// The verified sources' values a request carried, read once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Credentials {
    /// Each verified source that yielded a value, in `[identity.verify]`'s order.
    pub found: SmallVec<[Credential; 2]>,
    /// The first verified source the request carried more than once (two header lines, a
    /// header's underscore spelling, two cookies or parameters of its name): such a request
    /// proves nothing and is refused (400).
    pub ambiguous: Option<usize>,
}

impl Credentials {
    /// The credentials of `req` as `provenance` knows them.
    pub(super) fn read(req: &Request<'_>, provenance: &dyn Provenance) -> Self {
        let folding = Default::default();
        let verified = provenance.verified();
        let ambiguous = verified
            .iter()
            .position(|source| carried_twice(req, source));
        let found = verified
            .iter()
            .enumerate()
            .filter_map(|(index, source)| {
                let value = source.value(req, &folding).ok()??;
                let (state, identity) = provenance.state(index, &value);
                Some(Credential {
                    index,
                    state,
                    identity,
                })
            })
            .collect();
        Self { found, ambiguous }
    }

    /// The request's state as one word: proven when any value is, refused when any is and
    /// none is proven, unproven when it carried values and none is either, `None` when it
    /// carried no verified source at all.
    pub fn summary(&self) -> Option<ProofState> {
        let has = |state| self.found.iter().any(|c| c.state == state);
        match self.found.is_empty() {
            true => None,
            false if has(ProofState::Proven) => Some(ProofState::Proven),
            false if has(ProofState::Refused) => Some(ProofState::Refused),
            false => Some(ProofState::Unproven),
        }
    }
}

impl Request<'_> {
    /// The verified sources' values this request carried (none without `[identity.verify]`).
    pub fn credentials(&self) -> &Credentials {
        static NONE: LazyLock<Credentials> = LazyLock::new(Credentials::default);
        match self.provenance {
            Some(provenance) => self
                .credentials
                .get_or_init(|| Credentials::read(self, provenance)),
            None => &NONE,
        }
    }

    /// Whether the request proved who it is: a verified source carried a proven value, or
    /// its bearer token verified (`match.proven`).
    pub fn proven(&self) -> bool {
        let proven_value = self
            .credentials()
            .found
            .iter()
            .any(|c| c.state == ProofState::Proven);
        proven_value || matches!(self.token(), TokenState::Valid(_))
    }

    /// The first proven credential the request carried: its source (as written) and digest.
    pub fn proven_credential(&self) -> Option<(Arc<str>, Identity)> {
        let provenance = self.provenance?;
        let found = &self.credentials().found;
        let proven = found.iter().find(|c| c.state == ProofState::Proven)?;
        Some((provenance.name(proven.index).clone(), proven.identity))
    }

    /// The verified source (as written) the request carried twice, if any: it is refused.
    pub fn ambiguous_credential(&self) -> Option<Arc<str>> {
        let provenance = self.provenance?;
        let index = self.credentials().ambiguous?;
        Some(provenance.name(index).clone())
    }

    /// The verified source (as written) whose refused value the request is refused for at
    /// the edge (`refused = "reject"`), if any.
    pub fn rejected_credential(&self) -> Option<Arc<str>> {
        let provenance = self.provenance?;
        let found = &self.credentials().found;
        let rejected = found
            .iter()
            .find(|c| c.state == ProofState::Refused && provenance.rejects(c))?;
        Some(provenance.name(rejected.index).clone())
    }

    /// What the verified parts of `parts` showed in this request: only proven parts may name
    /// a caller.
    pub(super) fn parts_proof(&self, parts: &[Source]) -> PartsProof {
        let Some(provenance) = self.provenance else {
            return PartsProof::NoneVerified;
        };
        let verified = provenance.verified();
        let mut found = PartsProof::NoneVerified;
        for part in parts {
            let Some(index) = verified.iter().position(|v| v == part) else {
                continue;
            };
            let credentials = self.credentials();
            match credentials.found.iter().find(|c| c.index == index) {
                Some(c) if c.state == ProofState::Proven => found = PartsProof::Proven(c.identity),
                _ => return PartsProof::Unproven,
            }
        }
        found
    }
}

/// Whether `req` carries `source` more than once: two lines of its header or one beside its
/// underscore spelling (`X_Api_Key`, which servers that fold `_` into `-` read as the same
/// header), two cookies of its name, or two parameters of its name.
fn carried_twice(req: &Request<'_>, source: &Source) -> bool {
    match source {
        Source::Header(name) => {
            let lines = req.headers.get_all(name).iter().count();
            lines > 1 || (lines == 1 && underscore_spelling(req.headers, name))
        }
        Source::Cookie(name) => super::source::cookie_count(req.headers, name) > 1,
        Source::Query(name) => req.query.is_some_and(|q| {
            form_urlencoded::parse(q.as_bytes())
                .filter(|(key, _)| key == name)
                .count()
                > 1
        }),
        _ => false,
    }
}

/// Whether `headers` hold `name` spelt with underscores for its dashes.
fn underscore_spelling(headers: &http::HeaderMap, name: &http::HeaderName) -> bool {
    headers
        .keys()
        .any(|key| super::is_underscore_spelling(key.as_str(), name.as_str()))
}
