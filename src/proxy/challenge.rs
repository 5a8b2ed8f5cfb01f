//! Challenges into HTTP: the page the gate asked for (not a success: `challenge.status`,
//! never stored, never indexed, only its own inline script and style allowed, gzipped when
//! the client takes it), and what a solution earns (a pass cookie and a 303 to where the
//! client was going, a new page, or a 400 naming the parameter).

use super::render::{problem, Handling};
use crate::challenge::{Challenges, Coding, Page, Redemption, Visitor};
use crate::gate::reply::problem_body;
use crate::gate::Challenged;
use crate::identity::{Pass, Reach};
use crate::telemetry::RequestDecision;
use bytes::Bytes;
use http::header::{
    CACHE_CONTROL, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_SECURITY_POLICY, CONTENT_TYPE,
    LOCATION, REFERRER_POLICY, SET_COOKIE, VARY, WWW_AUTHENTICATE, X_CONTENT_TYPE_OPTIONS,
};
use http::{HeaderName, HeaderValue};
use pingora::http::{RequestHeader, ResponseHeader};
use std::net::IpAddr;

const X_ROBOTS_TAG: HeaderName = HeaderName::from_static("x-robots-tag");

/// The page `challenged` asks for, for `req` from `client`, showing its request id
/// `reference`.
pub(super) fn page(
    room: &Challenges,
    challenged: &Challenged<'_>,
    req: &RequestHeader,
    client: Option<IpAddr>,
    reference: &str,
) -> Handling {
    let visitor = Visitor {
        target: req.uri.path_and_query().map_or("/", |p| p.as_str()),
        client,
        reference,
    };
    let now_ms = room.clock().now_ms();
    let page = room.page(
        challenged.challenge,
        challenged.policy_id,
        &visitor,
        now_ms,
        Coding::accepted(&req.headers),
    );
    match page {
        Ok(page) => offered(page_answer(&page), room, now_ms),
        Err(e) => unavailable(&e.to_string()),
    }
}

/// The good pass the request `req` from `client` carries — its cookie's, or the one its
/// Privacy Pass token earns now, with the `Set-Cookie` value to answer with (`secure`: the
/// request came over HTTPS) — and whether a challenge page can reach its sender.
pub(super) async fn passed(
    room: Option<&Challenges>,
    req: &RequestHeader,
    client: Option<IpAddr>,
    secure: bool,
) -> (Option<Pass>, Reach, Option<String>) {
    let Some(room) = room else {
        return (None, Reach::NotAPage, None);
    };
    let reach = room.reach(&req.method, req.uri.path(), &req.headers);
    let now_ms = room.clock().now_ms();
    if let Some(pass) = room.pass_of(&req.headers, client, now_ms / 1000) {
        return (Some(pass), reach, None);
    }
    match room
        .redeem_token(&req.headers, client, now_ms, secure)
        .await
    {
        Some(earned) => (Some(earned.pass), reach, Some(earned.cookie)),
        None => (None, reach, None),
    }
}

/// What a solution came to (the request's decision, for the solution endpoint).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Solved {
    /// It earned a pass: the cookie and a 303 to the target.
    PassIssued,
    /// Wrong, stale or replayed: a new page.
    Refused,
    /// Its nonce did not open here (forged, or from another network): a 303 back.
    NonceRefused,
    /// Not a solution (a parameter missing or bad, or not a GET): 400 or 405.
    Malformed,
    /// No page or pass could be made: 503.
    Unavailable,
}

impl Solved {
    /// The request's decision.
    pub(super) fn decision(self) -> RequestDecision {
        match self {
            Self::PassIssued => RequestDecision::PassIssued,
            Self::Refused => RequestDecision::SolutionRefused,
            Self::NonceRefused => RequestDecision::NonceRefused,
            Self::Malformed => RequestDecision::SolutionMalformed,
            Self::Unavailable => RequestDecision::ChallengeUnavailable,
        }
    }
}

/// What the solution in `req` from `client` earns (`tls`: whether it came over TLS, so the
/// pass cookie is `Secure`; a new page shows the request id `reference`), and what it came to.
pub(super) async fn solution(
    room: &Challenges,
    req: &RequestHeader,
    (client, reference): (Option<IpAddr>, &str),
    tls: bool,
) -> (Handling, Solved) {
    if req.method != http::Method::GET && req.method != http::Method::HEAD {
        let body = problem_body(405, "Solutions come back with GET.", serde_json::json!({}));
        let allow = (http::header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return (problem(405, body, &[allow]), Solved::Malformed);
    }
    let now_ms = room.clock().now_ms();
    let coding = Coding::accepted(&req.headers);
    match room
        .redeem(req.uri.query(), client, reference, now_ms, tls, coding)
        .await
    {
        Ok(Redemption::Passed { cookie, target }) => {
            (see_other(&target, Some(&cookie)), Solved::PassIssued)
        }
        Ok(Redemption::Back { target }) => (see_other(&target, None), Solved::NonceRefused),
        Ok(Redemption::Again(page)) => (offered(page_answer(&page), room, now_ms), Solved::Refused),
        Ok(Redemption::Malformed(which)) => {
            let detail = format!("The challenge solution's `{which}` is missing or not valid.");
            let body = problem_body(400, &detail, serde_json::json!({ "parameter": which }));
            (problem(400, body, &[]), Solved::Malformed)
        }
        Err(e) => (unavailable(&e.to_string()), Solved::Unavailable),
    }
}

/// `answer` (a challenge page) with each trusted issuer's token challenge beside the page
/// (`WWW-Authenticate: PrivateToken …`, RFC 9577 §2.1), when any issuer is trusted.
fn offered(answer: Handling, room: &Challenges, now_ms: u64) -> Handling {
    let Some(tokens) = room.tokens() else {
        return answer;
    };
    match answer {
        Handling::Answer(mut header, body) => {
            let offers = tokens.offers(now_ms);
            // A 401 must say how to authenticate (RFC 9110 §15.5.2): with no issuer's key
            // known yet (a directory never read), the page is a 403 as without tokens.
            if offers.is_empty() && header.status == http::StatusCode::UNAUTHORIZED {
                if let Err(e) = header.set_status(403) {
                    log::error!("a challenge page's status could not be set: {e}");
                }
            }
            for offer in offers {
                if let Err(e) = header.append_header(WWW_AUTHENTICATE, offer) {
                    log::error!("a token challenge could not be offered: {e}");
                }
            }
            Handling::Answer(header, body)
        }
        forward => forward,
    }
}

fn page_answer(page: &Page) -> Handling {
    let build = || -> pingora::Result<Box<ResponseHeader>> {
        let mut header = ResponseHeader::build(page.status, Some(9))?;
        header.insert_header(CONTENT_TYPE, "text/html; charset=utf-8")?;
        if let Some(coding) = page.coding.content_encoding() {
            header.insert_header(CONTENT_ENCODING, coding)?;
        }
        header.insert_header(VARY, "Accept-Encoding")?;
        header.insert_header(CONTENT_LENGTH, page.body.len())?;
        header.insert_header(CACHE_CONTROL, "no-store")?;
        header.insert_header(X_ROBOTS_TAG, "noindex, nofollow")?;
        header.insert_header(CONTENT_SECURITY_POLICY, page.csp.clone())?;
        header.insert_header(X_CONTENT_TYPE_OPTIONS, "nosniff")?;
        header.insert_header(REFERRER_POLICY, "same-origin")?;
        Ok(Box::new(header))
    };
    match build() {
        Ok(header) => Handling::Answer(header, page.body.clone()),
        Err(e) => unavailable(&e.to_string()),
    }
}

/// A 303 to `target` (a checked same-origin path), setting `cookie` if given.
fn see_other(target: &str, cookie: Option<&str>) -> Handling {
    let build = || -> pingora::Result<Box<ResponseHeader>> {
        let mut header = ResponseHeader::build(303, Some(4))?;
        header.insert_header(LOCATION, target)?;
        header.insert_header(CONTENT_LENGTH, 0)?;
        header.insert_header(CACHE_CONTROL, "no-store")?;
        if let Some(cookie) = cookie {
            header.insert_header(SET_COOKIE, cookie)?;
        }
        Ok(Box::new(header))
    };
    match build() {
        Ok(header) => Handling::Answer(header, Bytes::new()),
        Err(e) => unavailable(&e.to_string()),
    }
}

/// No page could be made (no randomness, an unbuildable header): refused, never forwarded.
fn unavailable(why: &str) -> Handling {
    log::error!("could not answer with a challenge: {why}");
    let body = problem_body(
        503,
        "The challenge cannot be shown right now; retry shortly.",
        serde_json::json!({ "retry_after": 1 }),
    );
    problem(
        503,
        body,
        &[(http::header::RETRY_AFTER, HeaderValue::from(1u64))],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::challenge::{ChallengeSettings, Signer};
    use crate::clock::Clock;
    use crate::identity::{Bind, Challenge, ChallengeKind, IdentityKey};
    use crate::limiter::MemoryNonces;
    use crate::telemetry::Metrics;
    use std::sync::Arc;

    const T0_S: u64 = 1_700_000_000;

    /// A room on `clock`, and a request carrying its pass good until `expires_s`.
    fn room_and_request(clock: &Clock, expires_s: u64) -> (Challenges, RequestHeader) {
        let key = IdentityKey::random().unwrap();
        let settings = ChallengeSettings::default();
        let refresh = Challenge {
            kind: ChallengeKind::Refresh,
            bind: Bind::None,
        };
        let (_, value) = Signer::new(&key)
            .pass_for(7, refresh, None, expires_s)
            .unwrap();
        let mut req = RequestHeader::build("GET", b"/", None).unwrap();
        let cookie = format!("{}={value}", settings.cookie);
        req.insert_header(http::header::COOKIE, cookie).unwrap();
        let nonces = Arc::new(MemoryNonces::default());
        let metrics = Metrics::new().challenges.clone();
        let room = Challenges::new(settings, &key, nonces, Default::default(), metrics)
            .unwrap()
            .with_clock(clock.clone());
        (room, req)
    }

    /// Whether `req` passes in `room` now.
    async fn passes(room: &Challenges, req: &RequestHeader) -> bool {
        passed(Some(room), req, None, false).await.0.is_some()
    }

    #[tokio::test]
    async fn a_pass_opens_until_its_expiry_by_the_rooms_clock() {
        let clock = Clock::set_at(T0_S * 1000);
        let (room, req) = room_and_request(&clock, T0_S + 60);
        assert!(passes(&room, &req).await, "fresh");
        clock.advance(59_999);
        assert!(passes(&room, &req).await, "a ms before its end");
        clock.advance(1);
        assert!(!passes(&room, &req).await, "ended");
    }
}
