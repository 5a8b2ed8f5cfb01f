//! The RateLimit headers' values (draft-ietf-httpapi-ratelimit-headers-10) and `Retry-After`,
//! as every front door sends them: the proxy and the decision endpoint as HTTP headers, the
//! rate limit service as the headers Envoy passes to the client.

use crate::gate::{Gate, HeaderQuota, LevelId, LimitsOf, Standing};
use bytes::Bytes;
use http::HeaderValue;

/// The `RateLimit-Policy` and `RateLimit` values for an allowed response.
pub struct RateLimitHeaders {
    /// `RateLimit-Policy`.
    pub policy: HeaderValue,
    /// `RateLimit`.
    pub ratelimit: HeaderValue,
}

/// The `RateLimit-Policy` value of every level of every policy, rendered once per snapshot:
/// indexed by policy, then level (a lookup per allowed request, so no hashing).
pub struct PolicyHeaders(pub(super) Vec<Vec<HeaderValue>>);

impl PolicyHeaders {
    /// The values of every level of `gate`'s policies.
    pub fn new(gate: &Gate) -> Self {
        let mut values: Vec<Vec<HeaderValue>> = Vec::new();
        for (id, name, limits, in_flight) in gate.levels() {
            let mut text = policy_text(name, HeaderQuota::of(limits));
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

    /// The value describing `standing`'s bucket.
    pub(super) fn of(&self, standing: &Standing<'_>) -> HeaderValue {
        self.of_level(standing.level, standing.policy, standing.quota)
    }

    /// The value of a policy's `level`, else (an override's, a descriptor's) made from `name`
    /// and `quota`.
    pub(super) fn of_level(&self, level: LimitsOf, name: &str, quota: HeaderQuota) -> HeaderValue {
        let precomputed = match level {
            LimitsOf::Policy(LevelId { policy, level }) => {
                self.0.get(policy).and_then(|levels| levels.get(level))
            }
            LimitsOf::Descriptor => None,
        };
        match precomputed {
            Some(value) => value.clone(),
            None => header_value(policy_text(name, quota)),
        }
    }
}

/// `RateLimit-Policy` text of policy `name` with `quota`: quota and window (seconds to refill
/// from empty; none for a calendar quota, whose period has no fixed width).
pub fn policy_text(name: &str, quota: HeaderQuota) -> String {
    match quota.window_seconds {
        Some(w) => format!("\"{name}\";q={};w={w}", quota.capacity),
        None => format!("\"{name}\";q={}", quota.capacity),
    }
}

/// The `RateLimit-Policy` item of a `max_in_flight` of `limit` (quota unit: concurrent
/// requests, no window).
pub(super) fn concurrency_text(name: &str, limit: u32) -> String {
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

/// `RateLimit` text of a bucket with nothing left for the request and no reset to wait for.
pub fn exhausted_text(name: &str) -> String {
    format!("\"{name}\";r=0")
}

/// `Retry-After`: whole seconds until the request could pass, rounded up, at least 1.
pub fn retry_after(standing: &Standing<'_>) -> u64 {
    seconds_up(standing.assessment.wait_us()).max(1)
}

/// The texts of the headers describing `standing`: `RateLimit-Policy`, `RateLimit`, and
/// `Retry-After` when its bucket refused.
pub fn standing_texts(standing: &Standing<'_>) -> StandingTexts {
    StandingTexts {
        policy: policy_text(standing.policy, standing.quota),
        ratelimit: ratelimit_text(standing),
        retry_after: (!standing.assessment.is_allowed()).then(|| retry_after(standing)),
    }
}

/// The headers' texts describing one bucket's standing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandingTexts {
    /// `RateLimit-Policy`.
    pub policy: String,
    /// `RateLimit`.
    pub ratelimit: String,
    /// `Retry-After` in seconds, when the bucket refused.
    pub retry_after: Option<u64>,
}

/// A header value from text built of policy names (letters, digits, `-_.`), digits and
/// punctuation: always valid, taken without a copy.
pub(super) fn header_value(text: String) -> HeaderValue {
    HeaderValue::from_maybe_shared(Bytes::from(text)).unwrap_or(HeaderValue::from_static(""))
}

/// Microseconds to whole seconds, rounded up.
fn seconds_up(micros: u64) -> u64 {
    micros.div_ceil(1_000_000)
}
