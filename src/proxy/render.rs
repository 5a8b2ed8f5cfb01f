//! Outcomes into HTTP: `RateLimit` headers (draft-ietf-httpapi-ratelimit-headers-10),
//! `Retry-After`, and RFC 9457 problem+json bodies. Rendering cannot fail open: a refusal that
//! cannot be built becomes a 500, never a forward.

use crate::clock::wall_now_us;
use crate::control::{now_ms, BanHit, Block, Remedy};
use crate::gate::{BadCost, Busy, Gate, LevelId, Outcome, Quota, Standing, Unpayable};
use crate::identity::BotClaim;
use crate::limiter::Undecided;
use crate::telemetry::AccessList;
use bytes::Bytes;
use http::header::{HeaderName, RETRY_AFTER};
use http::HeaderValue;
use pingora::http::ResponseHeader;

mod problem;

pub(super) use problem::problem;
use problem::throttled_body;
pub use problem::{echo, problem_body, MAX_ECHO, PROBLEM_JSON};

/// What the proxy does with a request.
pub enum Action {
    /// Forward it, adding these `RateLimit-Policy` and `RateLimit` values to the response.
    Forward(Option<RateLimitHeaders>),
    /// Answer it with this response.
    Answer(Box<ResponseHeader>, Bytes),
}

/// The `RateLimit-Policy` and `RateLimit` values for an allowed response.
pub struct RateLimitHeaders {
    /// `RateLimit-Policy`.
    pub policy: HeaderValue,
    /// `RateLimit`.
    pub ratelimit: HeaderValue,
}

/// The `RateLimit-Policy` value of every level of every policy, rendered once per snapshot:
/// indexed by policy, then level (a lookup per allowed request, so no hashing).
pub(crate) struct PolicyHeaders(Vec<Vec<HeaderValue>>);

impl PolicyHeaders {
    pub(crate) fn new(gate: &Gate) -> Self {
        let mut values: Vec<Vec<HeaderValue>> = Vec::new();
        for (id, name, limits, in_flight) in gate.levels() {
            let mut text = policy_text(name, Quota::of(limits));
            if let Some(limit) = in_flight {
                text.push_str(", ");
                text.push_str(&concurrency_text(name, limit));
            }
            if values.len() <= id.policy {
                values.resize_with(id.policy + 1, Vec::new);
            }
            let levels = &mut values[id.policy];
            if levels.len() <= id.level {
                levels.resize(id.level + 1, HeaderValue::from_static(""));
            }
            levels[id.level] = header_value(text);
        }
        Self(values)
    }

    fn of(&self, standing: &Standing<'_>) -> HeaderValue {
        self.of_level(standing.level, standing.policy, standing.quota)
    }

    /// The value of `level`, else (an override's) made from `name` and `quota`.
    fn of_level(&self, level: LevelId, name: &str, quota: Quota) -> HeaderValue {
        let LevelId { policy, level } = level;
        match self.0.get(policy).and_then(|levels| levels.get(level)) {
            Some(value) => value.clone(),
            None => header_value(policy_text(name, quota)),
        }
    }
}

/// What the proxy does for `outcome`; throttled requests get `throttle_status`.
pub(crate) fn render(
    outcome: &Outcome<'_>,
    policies: &PolicyHeaders,
    throttle_status: u16,
    bot: Option<&BotClaim>,
) -> Action {
    match outcome {
        Outcome::Unlimited(_)
        | Outcome::Listed(AccessList::Allow)
        | Outcome::AllowedByRule(_)
        | Outcome::Undecided(Undecided::Pass) => Action::Forward(None),
        Outcome::Allowed(decided, _) => Action::Forward(Some(RateLimitHeaders {
            policy: policies.of(&decided.standing),
            ratelimit: header_value(ratelimit_text(&decided.standing)),
        })),
        Outcome::Listed(AccessList::Deny) => refusal(403, "This client is not allowed."),
        Outcome::Banned(ban) => banned(ban),
        Outcome::Denied(policy) => denied(policy, bot),
        Outcome::Blocked(block) => blocked(block, throttle_status),
        Outcome::InvalidToken => refusal(401, "The bearer token is not valid."),
        Outcome::Throttled(decided) => throttled(throttle_status, &decided.standing, policies),
        Outcome::Busy(busy) => concurrency_refusal(throttle_status, busy),
        Outcome::Unpayable(unpayable) => unpayable_refusal(throttle_status, unpayable, policies),
        Outcome::BadCost(bad) => bad_cost(bad),
        Outcome::Undecided(Undecided::Refuse) => store_unavailable(),
        // The challenge room renders its page (it needs a nonce); this is only reached when
        // no room is there to do it, and fails closed.
        Outcome::Challenged(challenged, _) => denied(challenged.policy, bot),
    }
}

/// `RateLimit-Policy` text of policy `name` with `limits`: quota and window (seconds to refill
/// from empty; none for a calendar quota, whose period has no fixed width).
pub fn policy_text(name: &str, quota: Quota) -> String {
    match quota.window_seconds {
        Some(w) => format!("\"{name}\";q={};w={w}", quota.capacity),
        None => format!("\"{name}\";q={}", quota.capacity),
    }
}

/// The `RateLimit-Policy` item of a `max_in_flight` of `limit` (quota unit: concurrent
/// requests, no window).
fn concurrency_text(name: &str, limit: u32) -> String {
    format!("\"{name}\";q={limit};qu=\"concurrent-requests\"")
}

/// `RateLimit` text: whole tokens remaining and seconds until the bucket is full again.
pub fn ratelimit_text(standing: &Standing<'_>) -> String {
    let a = &standing.assessment;
    let (mut r, mut t) = (itoa::Buffer::new(), itoa::Buffer::new());
    let remaining = r.format(a.remaining().floor() as u64);
    let reset = t.format(seconds_up(a.full_in_us()));
    let name: &str = standing.policy;
    let mut out = String::with_capacity(name.len() + remaining.len() + reset.len() + 8);
    for part in ["\"", name, "\";r=", remaining, ";t=", reset] {
        out.push_str(part);
    }
    out
}

/// `Retry-After`: whole seconds until the request could pass, rounded up, at least 1.
pub fn retry_after(standing: &Standing<'_>) -> u64 {
    seconds_up(standing.assessment.wait_us()).max(1)
}

/// A header value from text built of policy names (letters, digits, `-_.`), digits and
/// punctuation: always valid, taken without a copy.
fn header_value(text: String) -> HeaderValue {
    HeaderValue::from_maybe_shared(Bytes::from(text)).unwrap_or(HeaderValue::from_static(""))
}

/// Microseconds to whole seconds, rounded up.
fn seconds_up(micros: u64) -> u64 {
    micros.div_ceil(1_000_000)
}

/// The refusal of a throttled request: `status`, `Retry-After`, `RateLimit-Policy`,
/// `RateLimit` and a problem body naming the policy.
fn throttled(status: u16, standing: &Standing<'_>, policies: &PolicyHeaders) -> Action {
    let retry_after = retry_after(standing);
    let headers = [
        (RETRY_AFTER, HeaderValue::from(retry_after)),
        (
            HeaderName::from_static("ratelimit-policy"),
            policies.of(standing),
        ),
        (
            HeaderName::from_static("ratelimit"),
            header_value(ratelimit_text(standing)),
        ),
    ];
    let resets_at = standing.calendar.map(|c| c.resets_at(wall_now_us()));
    let body = throttled_body(status, standing.policy, retry_after, resets_at.as_deref());
    problem(status, body, &headers)
}

/// The refusal of a caller holding all `max_in_flight` slots of a policy: `status`,
/// `Retry-After: 1` (a slot frees when a request ends, which cannot be foreseen), the
/// concurrency quota and a problem body naming the policy.
fn concurrency_refusal(status: u16, busy: &Busy<'_>) -> Action {
    let (name, limit): (&str, u32) = (busy.policy, busy.limit);
    let detail =
        format!("Policy \"{name}\" allows {limit} concurrent requests per caller; retry in 1 s.");
    let extra = serde_json::json!({ "policy": name, "retry_after": 1, "max_in_flight": limit });
    let headers = [
        (RETRY_AFTER, HeaderValue::from(1u64)),
        (
            HeaderName::from_static("ratelimit-policy"),
            header_value(concurrency_text(name, limit)),
        ),
        (
            HeaderName::from_static("ratelimit"),
            header_value(format!("\"{name}\";r=0")),
        ),
    ];
    problem(status, problem_body(status, &detail, extra), &headers)
}

/// The refusal of a request that can never pass (its cost is above the bucket's capacity):
/// `status`, the policy's `RateLimit-Policy`, `RateLimit` with nothing left for it and no reset
/// (none would let it pass), no `Retry-After`, and a problem body saying why.
fn unpayable_refusal(status: u16, unpayable: &Unpayable<'_>, policies: &PolicyHeaders) -> Action {
    let name: &str = unpayable.policy;
    let (cost, capacity) = (unpayable.cost, unpayable.quota.capacity);
    let detail = format!(
        "This request costs {cost} tokens but policy \"{name}\" admits at most {capacity}: \
         it can never pass, so there is no time to retry after."
    );
    let extra = serde_json::json!({ "policy": name, "cost": cost, "capacity": capacity });
    let headers = [
        (
            HeaderName::from_static("ratelimit-policy"),
            policies.of_level(unpayable.level, name, unpayable.quota),
        ),
        (
            HeaderName::from_static("ratelimit"),
            header_value(format!("\"{name}\";r=0")),
        ),
    ];
    problem(status, problem_body(status, &detail, extra), &headers)
}

/// The refusal of a request whose cost header is not a cost: 400.
fn bad_cost(bad: &BadCost) -> Action {
    let detail = format!(
        "The {} header must be a whole number from 1 to {}.",
        bad.header, bad.capacity
    );
    let extra = serde_json::json!({ "policy": &*bad.policy, "header": bad.header.as_str() });
    problem(400, problem_body(400, &detail, extra), &[])
}

/// A refusal that is not about rate: `status` with a problem body saying `detail`.
fn refusal(status: u16, detail: &str) -> Action {
    let body = problem_body(status, detail, serde_json::json!({}));
    let challenge = [(
        http::header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer error=\"invalid_token\""),
    )];
    let extra: &[_] = if status == 401 { &challenge } else { &[] };
    problem(status, body, extra)
}

/// The refusal by a `deny` policy: 403, naming the policy.
/// The refusal of a `deny` policy, naming it and, when the request claimed a crawler, the
/// category it showed (`spoofed` for an impostor) and the crawler.
fn denied(policy: &str, bot: Option<&BotClaim>) -> Action {
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
    let body = problem_body(403, detail, extra);
    problem(403, body, &[])
}

/// The refusal of a banned client: 403, and while the ban has an end, `Retry-After` until
/// then.
fn banned(ban: &BanHit) -> Action {
    let left = ban
        .expires_at_ms
        .map(|end| end.saturating_sub(now_ms()).div_ceil(1000).max(1));
    let detail = "This client is banned.";
    let extra = match left {
        Some(seconds) => serde_json::json!({ "banned": true, "retry_after": seconds }),
        None => serde_json::json!({ "banned": true }),
    };
    let body = problem_body(403, detail, extra);
    match left {
        Some(seconds) => problem(403, body, &[(RETRY_AFTER, HeaderValue::from(seconds))]),
        None => problem(403, body, &[]),
    }
}

/// The refusal of a client on the blocklist: as banned, or the throttled answer (with
/// `Retry-After` until the entry ends) when its remedy is to throttle. Why it is listed is
/// logged, never answered.
fn blocked(block: &Block, throttle_status: u16) -> Action {
    match block.remedy {
        // A `captcha` decision the challenge could not reach (not a page load) stands as a
        // ban.
        Remedy::Ban | Remedy::Challenge => banned(&BanHit {
            id: block.id,
            expires_at_ms: Some(block.expires_at_ms),
        }),
        Remedy::Throttle => {
            let left = block
                .expires_at_ms
                .saturating_sub(now_ms())
                .div_ceil(1000)
                .max(1);
            let detail = format!("Too many requests from this client; retry in {left} s.");
            let extra = serde_json::json!({ "retry_after": left });
            let body = problem_body(throttle_status, &detail, extra);
            problem(
                throttle_status,
                body,
                &[(RETRY_AFTER, HeaderValue::from(left))],
            )
        }
    }
}

/// The refusal sent when the store cannot decide and `on_error = "deny"`.
fn store_unavailable() -> Action {
    let detail = "The rate limiter cannot decide right now; retry shortly.";
    let body = problem_body(503, detail, serde_json::json!({ "retry_after": 1 }));
    problem(503, body, &[(RETRY_AFTER, HeaderValue::from(1u64))])
}

#[cfg(test)]
mod tests;
