//! Replies: draft-10 header values, `Retry-After` rounding, problem bodies, refusals.

use super::*;
use crate::gate::standing::fixtures::{assessment, limits, standing};
use crate::gate::{Decided, HeaderQuota, LevelId, LimitsOf, Unpayable};
use crate::identity::Identity;
use std::sync::Arc;

fn no_headers() -> PolicyHeaders {
    PolicyHeaders(Vec::new())
}

/// The headers a front door sends with `refused`: its content type, then its own.
struct Sent {
    headers: http::HeaderMap,
}

fn answer_headers(refused: &Refusal) -> Sent {
    let mut headers = http::HeaderMap::new();
    headers.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static(PROBLEM_JSON),
    );
    for (name, value) in &refused.headers {
        headers.insert(name.clone(), value.clone());
    }
    Sent { headers }
}

#[test]
fn headers_follow_draft_10() {
    let (l, name) = (limits(10, "10/s"), Arc::from("per-user"));
    let s = standing(&name, &l, assessment(false, 0.3, 70_000, 970_000));
    assert_eq!(
        policy_text(&name, HeaderQuota::of(&l)),
        "\"per-user\";q=10;w=1"
    );
    assert_eq!(ratelimit_text(&s), "\"per-user\";r=0;t=1");
    assert_eq!(retry_after(&s), 1);
}

#[test]
fn retry_after_rounds_up_and_is_at_least_one() {
    let (l, name) = (limits(1, "1/m"), Arc::from("p"));
    let at = |us| retry_after(&standing(&name, &l, assessment(false, 0.0, us, us)));
    assert_eq!(at(0), 1);
    assert_eq!(at(1), 1);
    assert_eq!(at(1_000_001), 2);
    assert_eq!(at(60_000_000), 60);
}

#[test]
fn the_problem_body_names_the_policy() {
    let (l, name) = (limits(10, "10/s"), Arc::from("per-user"));
    let s = standing(&name, &l, assessment(false, 0.0, 100_000, 1_000_000));
    let anonymous = Identity::anonymous(&crate::identity::IdentityKey::from_bytes([0; 32]));
    let decided = Decided {
        standing: s,
        identity: anonymous,
        source: None,
        caller: anonymous,
    };
    let Reply::Refuse(refused) = reply(
        &Outcome::Throttled(decided),
        &no_headers(),
        429,
        None,
        &Clock::System,
    ) else {
        panic!("a throttled request is answered");
    };
    assert_eq!(refused.status, 429);
    let (header, body) = (answer_headers(&refused), refused.body);
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(json["policy"], "per-user");
    assert_eq!(json["status"], 429);
    assert_eq!(json["title"], "Too Many Requests");
    assert_eq!(json["retry_after"], 1);
    assert_eq!(
        json["detail"],
        "Rate limit of policy \"per-user\" exceeded; retry in 1 s."
    );
    assert_eq!(json["type"], "about:blank");
    assert_eq!(header.headers["content-type"], PROBLEM_JSON);
    assert_eq!(header.headers["ratelimit-policy"], "\"per-user\";q=10;w=1");
}

#[test]
fn a_request_that_can_never_pass_is_not_told_when_to_retry() {
    let (l, name) = (limits(10, "10/s"), Arc::from("per-user"));
    let anonymous = Identity::anonymous(&crate::identity::IdentityKey::from_bytes([0; 32]));
    let unpayable = Unpayable {
        policy: &name,
        level: LimitsOf::Policy(LevelId {
            policy: 0,
            level: 0,
        }),
        quota: HeaderQuota::of(&l),
        cost: 4_294_967_295,
        identity: anonymous,
        source: None,
        caller: anonymous,
    };
    let Reply::Refuse(refused) = reply(
        &Outcome::Unpayable(unpayable),
        &no_headers(),
        429,
        None,
        &Clock::System,
    ) else {
        panic!("an unpayable request is answered");
    };
    assert_eq!(refused.status, 429);
    let (header, body) = (answer_headers(&refused), refused.body);
    assert!(header.headers.get("retry-after").is_none());
    assert_eq!(header.headers["ratelimit-policy"], "\"per-user\";q=10;w=1");
    assert_eq!(
        header.headers["ratelimit"], "\"per-user\";r=0",
        "no reset lets it pass"
    );
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        (json["cost"].as_u64(), json["capacity"].as_u64()),
        (Some(4_294_967_295), Some(10))
    );
    assert!(json.get("retry_after").is_none());
    let detail = json["detail"].as_str().unwrap();
    assert!(
        detail.contains("costs 4294967295 tokens") && detail.contains("at most 10"),
        "{detail}"
    );
}

#[test]
fn refusals_are_answered_never_forwarded() {
    for outcome in [
        Outcome::Listed(AccessList::Deny),
        Outcome::InvalidToken,
        Outcome::Undecided(Undecided::Refuse),
    ] {
        let reply = reply(&outcome, &no_headers(), 429, None, &Clock::System);
        assert!(matches!(reply, Reply::Refuse(..)), "{outcome:?}");
    }
}
