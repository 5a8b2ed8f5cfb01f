//! What the client is told: `RateLimit` headers (draft-ietf-httpapi-ratelimit-headers-10),
//! `Retry-After`, and RFC 9457 problem+json bodies for refusals and upstream failures.

use crate::limiter::Assessment;
use crate::policy::Limits;
use bytes::Bytes;
use http::{HeaderValue, StatusCode};
use pingora::http::ResponseHeader;
use pingora::Result;

/// The media type of problem bodies (RFC 9457).
pub const PROBLEM_JSON: &str = "application/problem+json";

/// The policy a response describes, and how its bucket stands.
#[derive(Debug, Clone, Copy)]
pub struct Standing<'a> {
    /// The policy's name.
    pub name: &'a str,
    /// The limits the caller's bucket has (the policy's, or its tier's).
    pub limits: &'a Limits,
    /// Tokens a request takes.
    pub cost: u64,
    /// The bucket's answer for this request.
    pub assessment: Assessment,
}

impl Standing<'_> {
    /// How many more requests of this policy's cost the bucket allows now.
    fn requests_left(&self) -> u64 {
        (self.assessment.remaining / self.cost as f64).floor() as u64
    }

    /// `RateLimit-Policy`: the quota (capacity) and window (seconds to refill from empty).
    pub fn policy_header(&self) -> String {
        let l = self.limits;
        format!(
            "\"{}\";q={};w={}",
            self.name,
            l.capacity,
            l.window_seconds()
        )
    }

    /// `RateLimit`: whole tokens remaining and seconds until the bucket is full again.
    pub fn ratelimit_header(&self) -> String {
        let a = &self.assessment;
        let (mut r, mut t) = (itoa::Buffer::new(), itoa::Buffer::new());
        let remaining = r.format(a.remaining.floor() as u64);
        let reset = t.format(seconds_up(a.full_in_us));
        let mut out = String::with_capacity(self.name.len() + remaining.len() + reset.len() + 8);
        for part in ["\"", self.name, "\";r=", remaining, ";t=", reset] {
            out.push_str(part);
        }
        out
    }

    /// The `RateLimit` header value.
    pub fn ratelimit_value(&self) -> HeaderValue {
        header_value(self.ratelimit_header())
    }

    /// `Retry-After`: whole seconds until the request could pass, rounded up, at least 1.
    pub fn retry_after(&self) -> u64 {
        seconds_up(self.assessment.retry_after_us).max(1)
    }
}

/// `RateLimit-Policy` of policy `name` with `limits`.
fn policy_header(name: &str, limits: &Limits) -> String {
    format!(
        "\"{name}\";q={};w={}",
        limits.capacity,
        limits.window_seconds()
    )
}

/// The `RateLimit-Policy` header value of policy `name` with `limits`.
pub fn policy_header_value(name: &str, limits: &Limits) -> HeaderValue {
    header_value(policy_header(name, limits))
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

/// The index of the standing the headers should describe: among refusing policies the one
/// that makes the client wait longest; if none refused, the one with the fewest requests left
/// (then the one slowest to refill).
pub fn most_restrictive(standings: &[Standing<'_>]) -> Option<usize> {
    let indexed = standings.iter().enumerate();
    let refused = indexed
        .clone()
        .filter(|(_, s)| !s.assessment.allowed)
        .max_by_key(|(_, s)| s.assessment.retry_after_us);
    refused
        .or_else(|| {
            indexed.min_by(|(_, a), (_, b)| {
                a.requests_left()
                    .cmp(&b.requests_left())
                    .then(b.assessment.full_in_us.cmp(&a.assessment.full_in_us))
            })
        })
        .map(|(i, _)| i)
}

/// A problem+json body (RFC 9457) with `extra` members merged in.
pub fn problem_body(status: u16, detail: &str, extra: serde_json::Value) -> Bytes {
    let title = StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Error");
    let mut body = serde_json::json!({
        "type": "about:blank",
        "title": title,
        "status": status,
        "detail": detail,
    });
    if let (Some(body), serde_json::Value::Object(extra)) = (body.as_object_mut(), extra) {
        body.extend(extra);
    }
    Bytes::from(body.to_string())
}

/// A response header for a problem body of `len` bytes.
pub fn problem_header(status: u16, len: usize) -> Result<ResponseHeader> {
    let mut header = ResponseHeader::build(status, Some(8))?;
    header.insert_header(http::header::CONTENT_TYPE, PROBLEM_JSON)?;
    header.insert_header(http::header::CONTENT_LENGTH, len)?;
    header.insert_header(http::header::CACHE_CONTROL, "no-store")?;
    Ok(header)
}

/// The refusal of a throttled request: `status`, `Retry-After`, `RateLimit-Policy`,
/// `RateLimit` and a problem body naming the policy.
pub fn throttled(status: u16, standing: &Standing<'_>) -> Result<(ResponseHeader, Bytes)> {
    let retry_after = standing.retry_after();
    let name = standing.name;
    let detail = format!("Rate limit of policy \"{name}\" exceeded; retry in {retry_after} s.");
    let extra = serde_json::json!({ "policy": name, "retry_after": retry_after });
    let body = problem_body(status, &detail, extra);
    let mut header = problem_header(status, body.len())?;
    header.insert_header(http::header::RETRY_AFTER, retry_after)?;
    header.insert_header("ratelimit-policy", standing.policy_header())?;
    header.insert_header("ratelimit", standing.ratelimit_header())?;
    Ok((header, body))
}

/// A refusal that is not about rate: `status` with a problem body saying `detail`.
pub fn refusal(status: u16, detail: &str) -> Result<(ResponseHeader, Bytes)> {
    let body = problem_body(status, detail, serde_json::json!({}));
    let mut header = problem_header(status, body.len())?;
    if status == 401 {
        header.insert_header(
            http::header::WWW_AUTHENTICATE,
            "Bearer error=\"invalid_token\"",
        )?;
    }
    Ok((header, body))
}

/// The refusal sent when the store cannot decide and `on_error = "deny"`.
pub fn store_unavailable() -> Result<(ResponseHeader, Bytes)> {
    let status = 503;
    let detail = "The rate limiter cannot decide right now; retry shortly.";
    let body = problem_body(status, detail, serde_json::json!({ "retry_after": 1 }));
    let mut header = problem_header(status, body.len())?;
    header.insert_header(http::header::RETRY_AFTER, 1)?;
    Ok((header, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(capacity: u64, rate: &str) -> Limits {
        Limits {
            capacity,
            rate: rate.parse().unwrap(),
        }
    }

    fn assessment(
        allowed: bool,
        remaining: f64,
        retry_after_us: u64,
        full_in_us: u64,
    ) -> Assessment {
        Assessment {
            allowed,
            remaining,
            retry_after_us,
            full_in_us,
        }
    }

    fn standing<'a>(name: &'a str, limits: &'a Limits, a: Assessment) -> Standing<'a> {
        Standing {
            name,
            limits,
            cost: 1,
            assessment: a,
        }
    }

    #[test]
    fn headers_follow_draft_10() {
        let l = limits(10, "10/s");
        let s = standing("per-user", &l, assessment(false, 0.3, 70_000, 970_000));
        assert_eq!(s.policy_header(), "\"per-user\";q=10;w=1");
        assert_eq!(s.ratelimit_header(), "\"per-user\";r=0;t=1");
        assert_eq!(s.retry_after(), 1);
    }

    #[test]
    fn retry_after_rounds_up_and_is_at_least_one() {
        let l = limits(1, "1/m");
        let at = |us| standing("p", &l, assessment(false, 0.0, us, us)).retry_after();
        assert_eq!(at(0), 1);
        assert_eq!(at(1), 1);
        assert_eq!(at(1_000_001), 2);
        assert_eq!(at(60_000_000), 60);
    }

    #[test]
    fn the_refusal_with_the_longest_wait_is_described() {
        let l = limits(10, "1/s");
        let standings = [
            standing("a", &l, assessment(true, 9.0, 0, 1)),
            standing("b", &l, assessment(false, 0.0, 5, 9)),
            standing("c", &l, assessment(false, 0.0, 50, 9)),
        ];
        assert_eq!(most_restrictive(&standings), Some(2));
    }

    #[test]
    fn when_all_pass_the_fewest_requests_left_is_described() {
        let (wide, narrow) = (limits(100, "1/s"), limits(10, "1/s"));
        let standings = [
            standing("a", &wide, assessment(true, 50.0, 0, 1)),
            standing("b", &narrow, assessment(true, 3.0, 0, 1)),
        ];
        assert_eq!(most_restrictive(&standings), Some(1));
        assert!(most_restrictive(&[]).is_none());
    }

    #[test]
    fn the_problem_body_names_the_policy() {
        let l = limits(10, "10/s");
        let s = standing("per-user", &l, assessment(false, 0.0, 100_000, 1_000_000));
        let (header, body) = throttled(429, &s).unwrap();
        assert_eq!(header.status, 429);
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(json["policy"], "per-user");
        assert_eq!(json["status"], 429);
        assert_eq!(json["title"], "Too Many Requests");
        assert_eq!(header.headers["content-type"], PROBLEM_JSON);
    }
}
