//! Each kind of refusal: its status, headers and problem body.

use super::headers::{
    concurrency_text, exhausted_text, header_value, ratelimit_text, retry_after, PolicyHeaders,
};
use super::problem::{problem_body, throttled_body};
use super::Refusal;
use crate::clock::Clock;
use crate::control::{BanHit, Block, Remedy};
use crate::gate::{BadCost, Busy, Standing, Unpayable};
use crate::identity::{BotClaim, Trapped};
use http::header::{HeaderName, RETRY_AFTER};
use http::HeaderValue;

const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// The refusal of a throttled request: `status`, `Retry-After`, `RateLimit-Policy`,
/// `RateLimit` and a problem body naming the policy (and when a quota resets, by `clock`).
pub(super) fn throttled(
    status: u16,
    standing: &Standing<'_>,
    policies: &PolicyHeaders,
    clock: &Clock,
) -> Refusal {
    let retry_after = retry_after(standing);
    let headers = [
        (RETRY_AFTER, HeaderValue::from(retry_after)),
        (RATELIMIT_POLICY, policies.of(standing)),
        (RATELIMIT, header_value(ratelimit_text(standing))),
    ];
    let resets_at = standing.calendar.map(|c| c.resets_at(clock.now_us()));
    let body = throttled_body(status, standing.policy, retry_after, resets_at.as_deref());
    Refusal::new(status, body, &headers)
}

/// The refusal of a caller holding all `max_in_flight` slots of a policy: `status`,
/// `Retry-After: 1` (a slot frees when a request ends, which cannot be foreseen), the
/// concurrency quota and a problem body naming the policy.
pub(super) fn concurrency_refusal(status: u16, busy: &Busy<'_>) -> Refusal {
    let (name, limit): (&str, u32) = (busy.policy, busy.limit);
    let detail =
        format!("Policy \"{name}\" allows {limit} concurrent requests per caller; retry in 1 s.");
    let extra = serde_json::json!({ "policy": name, "retry_after": 1, "max_in_flight": limit });
    let headers = [
        (RETRY_AFTER, HeaderValue::from(1u64)),
        (
            RATELIMIT_POLICY,
            header_value(concurrency_text(name, limit)),
        ),
        (RATELIMIT, header_value(exhausted_text(name))),
    ];
    Refusal::new(status, problem_body(status, &detail, extra), &headers)
}

/// The refusal of a request that can never pass (its cost is above the bucket's capacity):
/// `status`, the policy's `RateLimit-Policy`, `RateLimit` with nothing left for it and no reset
/// (none would let it pass), no `Retry-After`, and a problem body saying why.
pub(super) fn unpayable_refusal(
    status: u16,
    unpayable: &Unpayable<'_>,
    policies: &PolicyHeaders,
) -> Refusal {
    let name: &str = unpayable.policy;
    let (cost, capacity) = (unpayable.cost, unpayable.quota.capacity);
    let detail = format!(
        "This request costs {cost} tokens but policy \"{name}\" admits at most {capacity}: \
         it can never pass, so there is no time to retry after."
    );
    let extra = serde_json::json!({ "policy": name, "cost": cost, "capacity": capacity });
    let headers = [
        (
            RATELIMIT_POLICY,
            policies.of_level(unpayable.level, name, unpayable.quota),
        ),
        (RATELIMIT, header_value(exhausted_text(name))),
    ];
    Refusal::new(status, problem_body(status, &detail, extra), &headers)
}

/// The refusal of a request whose cost header is not a cost: 400.
pub(super) fn bad_cost(bad: &BadCost) -> Refusal {
    let detail = format!(
        "The {} header must be a whole number from 1 to {}.",
        bad.header, bad.capacity
    );
    let extra = serde_json::json!({ "policy": &*bad.policy, "header": bad.header.as_str() });
    Refusal::new(400, problem_body(400, &detail, extra), &[])
}

/// The refusal of a request that sent a verified source twice: 400, naming the source.
pub(super) fn ambiguous_credential(source: &str) -> Refusal {
    let detail = format!("`{source}` was sent more than once; send it once.");
    let extra = serde_json::json!({ "source": source });
    Refusal::new(400, problem_body(400, &detail, extra), &[])
}

/// The problem type of a refused credential, so a client can tell it from other 403s.
pub(super) const KEY_REFUSED_TYPE: &str = "urn:floodgate:problem:key-refused";

/// The refusal of a credential the backend refuses now (`refused = "reject"`): 403, of its
/// own problem type.
pub(super) fn key_refused(source: &str) -> Refusal {
    let detail = format!("The `{source}` credential is refused; use a valid one.");
    let extra = serde_json::json!({ "type": KEY_REFUSED_TYPE, "source": source });
    Refusal::new(403, problem_body(403, &detail, extra), &[])
}

/// A refusal that is not about rate: `status` with a problem body saying `detail`.
pub(super) fn refusal(status: u16, detail: &str) -> Refusal {
    let body = problem_body(status, detail, serde_json::json!({}));
    let challenge = [(
        http::header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer error=\"invalid_token\""),
    )];
    let extra: &[_] = if status == 401 { &challenge } else { &[] };
    Refusal::new(status, body, extra)
}

/// The refusal of a `deny` policy, naming it and, when the request claimed a crawler, the
/// category it showed (`spoofed` for an impostor) and the crawler: 403.
pub(super) fn denied(policy: &str, bot: Option<&BotClaim>) -> Refusal {
    let detail = "A policy denies this request.";
    let extra = match bot {
        Some(claim) => serde_json::json!({
            "policy": policy,
            "bot": claim.category().word(),
            "crawler": &*claim.name,
            "verified": claim.verified(),
        }),
        None => serde_json::json!({ "policy": policy }),
    };
    Refusal::new(403, problem_body(403, detail, extra), &[])
}

/// The refusal of a banned client: 403, and while the ban has an end, `Retry-After` until
/// then (by `clock`).
pub(super) fn banned(ban: &BanHit, clock: &Clock) -> Refusal {
    let left = ban
        .expires_at_ms
        .map(|end| end.saturating_sub(clock.now_ms()).div_ceil(1000).max(1));
    let detail = "This client is banned.";
    let extra = match left {
        Some(seconds) => serde_json::json!({ "banned": true, "retry_after": seconds }),
        None => serde_json::json!({ "banned": true }),
    };
    let body = problem_body(403, detail, extra);
    match left {
        Some(seconds) => Refusal::new(403, body, &[(RETRY_AFTER, HeaderValue::from(seconds))]),
        None => Refusal::new(403, body, &[]),
    }
}

/// The refusal of a client the robots.txt trap caught, until its trap ban ends (by `clock`).
pub(super) fn trapped_refusal(trapped: &Trapped, clock: &Clock) -> Refusal {
    let left = trapped
        .until_ms
        .saturating_sub(clock.now_ms())
        .div_ceil(1000)
        .max(1);
    let detail = "This client fetched a path robots.txt keeps from every crawler.";
    let extra = serde_json::json!({ "trapped": true, "retry_after": left });
    let body = problem_body(403, detail, extra);
    Refusal::new(403, body, &[(RETRY_AFTER, HeaderValue::from(left))])
}

/// The refusal of a client on the blocklist: as banned, or the throttled answer (with
/// `Retry-After` until the entry ends) when its remedy is to throttle. Why it is listed is
/// logged, never answered. The time left is by `clock`.
pub(super) fn blocked(block: &Block, throttle_status: u16, clock: &Clock) -> Refusal {
    match block.remedy {
        // A `captcha` decision the challenge could not reach (not a page load) stands as a
        // ban.
        Remedy::Ban | Remedy::Challenge => banned(
            &BanHit {
                id: block.id,
                expires_at_ms: Some(block.expires_at_ms),
            },
            clock,
        ),
        Remedy::Throttle => {
            let left = block
                .expires_at_ms
                .saturating_sub(clock.now_ms())
                .div_ceil(1000)
                .max(1);
            let detail = format!("Too many requests from this client; retry in {left} s.");
            let extra = serde_json::json!({ "retry_after": left });
            let body = problem_body(throttle_status, &detail, extra);
            let headers = [(RETRY_AFTER, HeaderValue::from(left))];
            Refusal::new(throttle_status, body, &headers)
        }
    }
}

/// The refusal sent when the store cannot decide and `on_error = "deny"`.
pub(super) fn store_unavailable() -> Refusal {
    let detail = "The rate limiter cannot decide right now; retry shortly.";
    let body = problem_body(503, detail, serde_json::json!({ "retry_after": 1 }));
    Refusal::new(503, body, &[(RETRY_AFTER, HeaderValue::from(1u64))])
}
