//! The parts of a `ShouldRateLimit` answer: a descriptor's status, the draft-10 RateLimit
//! headers (and `Retry-After`) of the most restrictive limit, and the answer around them. A
//! request that can never pass (its cost above a limit's capacity) is refused without a
//! `Retry-After` and says why in the body Envoy sends the client.

use super::rules::Rule;
use crate::gate::reply::{exhausted_text, policy_text, standing_texts};
use crate::gate::{HeaderQuota, Standing};
use envoy_types::pb::envoy::config::core::v3::HeaderValue;
use envoy_types::pb::envoy::service::ratelimit::v3::rate_limit_response::{
    Code, DescriptorStatus, RateLimit,
};
use envoy_types::pb::envoy::service::ratelimit::v3::RateLimitResponse;

/// A limited descriptor's status `code`, with `remaining` tokens and the time until the
/// bucket is full (OK) or the request would pass (OVER_LIMIT).
pub(super) fn status(rule: &Rule, code: Code, remaining: f64, reset_us: u64) -> DescriptorStatus {
    DescriptorStatus {
        duration_until_reset: Some(duration(reset_us)),
        ..limit_status(rule, code, remaining)
    }
}

/// A status naming `rule`'s limit, without a time until reset.
pub(super) fn limit_status(rule: &Rule, code: Code, remaining: f64) -> DescriptorStatus {
    DescriptorStatus {
        code: code as i32,
        current_limit: Some(RateLimit {
            name: rule.name.clone(),
            requests_per_unit: rule.requests_per_unit,
            unit: rule.unit,
        }),
        limit_remaining: remaining.max(0.0).floor() as u32,
        ..DescriptorStatus::default()
    }
}

/// `RateLimit-Policy`, `RateLimit` and, when refused, `Retry-After` of the `deciding`
/// standing (the most restrictive), if any.
pub(super) fn headers(deciding: Option<&Standing<'_>>) -> Vec<HeaderValue> {
    let Some(texts) = deciding.map(standing_texts) else {
        return Vec::new();
    };
    let mut headers = vec![
        header("RateLimit-Policy", texts.policy),
        header("RateLimit", texts.ratelimit),
    ];
    if let Some(seconds) = texts.retry_after {
        headers.push(header("Retry-After", seconds.to_string()));
    }
    headers
}

/// The refusal of a request costing `cost` under `rule`, whose capacity is smaller: OVER_LIMIT
/// with the limit's `RateLimit-Policy`, `RateLimit` with nothing left for it and no reset (none
/// would let it pass), no `Retry-After`, and a body saying why.
pub(super) fn unpayable(
    rule: &Rule,
    cost: u64,
    statuses: Vec<DescriptorStatus>,
) -> RateLimitResponse {
    let quota = HeaderQuota::of(&rule.limits);
    let name = &rule.arc_name;
    let headers = vec![
        header("RateLimit-Policy", policy_text(name, quota)),
        header("RateLimit", exhausted_text(name)),
    ];
    let why = format!(
        "This request costs {cost} tokens but limit \"{name}\" admits at most {}: it can never \
         pass, so there is no time to retry after.\n",
        quota.capacity
    );
    RateLimitResponse {
        raw_body: why.into_bytes(),
        ..answer(Code::OverLimit, statuses, headers)
    }
}

fn header(key: &str, value: String) -> HeaderValue {
    HeaderValue {
        key: key.to_owned(),
        value,
        ..HeaderValue::default()
    }
}

/// The answer: `code` overall, a status per descriptor, headers for the client.
pub(super) fn answer(
    code: Code,
    statuses: Vec<DescriptorStatus>,
    headers: Vec<HeaderValue>,
) -> RateLimitResponse {
    RateLimitResponse {
        overall_code: code as i32,
        statuses,
        response_headers_to_add: headers,
        ..RateLimitResponse::default()
    }
}

fn duration(micros: u64) -> envoy_types::pb::google::protobuf::Duration {
    envoy_types::pb::google::protobuf::Duration {
        seconds: (micros / 1_000_000) as i64,
        nanos: ((micros % 1_000_000) * 1_000) as i32,
    }
}
