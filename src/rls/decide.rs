//! One `ShouldRateLimit`: the request's descriptors meet their limits (a limit that
//! `replaces` another drops it), every limited descriptor's bucket is taken in one
//! all-or-nothing call to the store (`hits_addend` is the cost), and the answer says, per
//! descriptor and overall, OK or OVER_LIMIT, with the draft-10 RateLimit headers (and
//! `Retry-After`) of the most restrictive limit for Envoy to pass to the client. When the store
//! cannot decide, `on_error` does, as for the proxy: Envoy gets an answer, not an error.

use super::lookup::find;
use super::rules::{Action, RlsRules, Rule};
use crate::gate::{most_restrictive, LevelId, Quota, Standing};
use crate::identity::{Identity, IdentityKey};
use crate::limiter::{Assessment, Assessments, Fallback, Limiter, Mode, Take, Terms, Undecided};
use crate::proxy::{policy_text, ratelimit_text, retry_after};
use crate::telemetry::{Decision, Metrics};
use envoy_types::pb::envoy::config::core::v3::HeaderValue;
use envoy_types::pb::envoy::service::ratelimit::v3::rate_limit_response::{
    Code, DescriptorStatus, RateLimit,
};
use envoy_types::pb::envoy::service::ratelimit::v3::{RateLimitRequest, RateLimitResponse};
use std::collections::HashSet;
use std::sync::Arc;

/// What answering needs besides the rules.
pub struct Deciders {
    /// Where buckets live.
    pub limiter: Arc<dyn Limiter>,
    /// What decides when the store cannot.
    pub fallback: Fallback,
    /// The key of descriptor digests.
    pub key: IdentityKey,
    /// Every series.
    pub metrics: Arc<Metrics>,
}

/// A limited descriptor of the request.
struct Limited {
    /// Its position among the request's descriptors.
    index: usize,
    rule: Arc<Rule>,
    identity: Identity,
    cost: u64,
}

/// The answer to `request` under `rules`.
pub async fn decide(
    rules: &RlsRules,
    deciders: &Deciders,
    request: &RateLimitRequest,
) -> RateLimitResponse {
    let (limited, unlimited) = limited(rules, deciders, request);
    let mut statuses: Vec<DescriptorStatus> = request
        .descriptors
        .iter()
        .map(|_| DescriptorStatus {
            code: Code::Ok as i32,
            ..DescriptorStatus::default()
        })
        .collect();
    // As envoyproxy/ratelimit answers an unlimited descriptor.
    for i in unlimited {
        statuses[i].limit_remaining = u32::MAX;
    }
    let refused_by_rule = limited.iter().any(|l| l.rule.refuses_all && !l.rule.shadow);
    for l in limited.iter().filter(|l| l.rule.refuses_all) {
        statuses[l.index] = status(l, l.rule.shadow, 0.0, 0);
    }
    let limited: Vec<Limited> = limited
        .into_iter()
        .filter(|l| !l.rule.refuses_all)
        .collect();
    if limited.is_empty() {
        let code = if refused_by_rule {
            Code::OverLimit
        } else {
            Code::Ok
        };
        return answer(code, statuses, Vec::new());
    }
    let takes: Vec<Take<'_>> = limited
        .iter()
        .map(|l| Take {
            key: crate::limiter::BucketKey {
                policy: &l.rule.key,
                identity: l.identity,
            },
            spec: l.rule.limits.spec(None, 0),
            cost: l.cost as f64,
            mode: if l.rule.shadow {
                Mode::Shadow
            } else {
                Mode::Enforce
            },
            terms: Terms::default(),
        })
        .collect();
    let assessments = match assess(deciders, &takes).await {
        Ok(assessments) => assessments,
        Err(Undecided::Pass) => return answer(Code::Ok, statuses, Vec::new()),
        Err(Undecided::Refuse) => {
            for s in &mut statuses {
                s.code = Code::OverLimit as i32;
            }
            return answer(Code::OverLimit, statuses, Vec::new());
        }
    };
    let enforced_ok = !refused_by_rule
        && limited
            .iter()
            .zip(&assessments)
            .all(|(l, a)| l.rule.shadow || a.allowed);
    let mut standings = Vec::with_capacity(limited.len());
    for (l, a) in limited.iter().zip(&assessments) {
        let allowed = l.rule.shadow || a.allowed;
        count(deciders, l, a, enforced_ok);
        let reset_us = if allowed {
            a.full_in_us
        } else {
            a.retry_after_us
        };
        statuses[l.index] = status(l, allowed, a.remaining, reset_us);
        if !l.rule.shadow {
            standings.push(Standing {
                policy: &l.rule.arc_name,
                level: LevelId {
                    policy: 0,
                    level: 0,
                },
                quota: Quota::of(&l.rule.limits),
                calendar: None,
                cost: l.cost,
                assessment: *a,
            });
        }
    }
    let code = if enforced_ok {
        Code::Ok
    } else {
        Code::OverLimit
    };
    answer(code, statuses, headers(&standings))
}

/// A limited descriptor's status: OK when `allowed`, with `remaining` tokens and the time
/// until the bucket is full (OK) or the request would pass (OVER_LIMIT).
fn status(l: &Limited, allowed: bool, remaining: f64, reset_us: u64) -> DescriptorStatus {
    DescriptorStatus {
        code: if allowed { Code::Ok } else { Code::OverLimit } as i32,
        current_limit: Some(RateLimit {
            name: l.rule.name.clone(),
            requests_per_unit: l.rule.requests_per_unit,
            unit: l.rule.unit,
        }),
        limit_remaining: remaining.max(0.0).floor() as u32,
        duration_until_reset: Some(duration(reset_us)),
        ..DescriptorStatus::default()
    }
}

/// The request's limited descriptors, after `replaces`, and the positions of its unlimited
/// ones.
fn limited(
    rules: &RlsRules,
    deciders: &Deciders,
    request: &RateLimitRequest,
) -> (Vec<Limited>, Vec<usize>) {
    let request_cost = u64::from(request.hits_addend.max(1));
    let mut found: Vec<Limited> = Vec::new();
    let mut unlimited = Vec::new();
    for (index, descriptor) in request.descriptors.iter().enumerate() {
        let entries: Vec<(&str, &str)> = descriptor
            .entries
            .iter()
            .map(|e| (e.key.as_str(), e.value.as_str()))
            .collect();
        let rule = match find(rules, &request.domain, &entries) {
            Some(Action::Limit(rule)) => rule,
            Some(Action::Unlimited) => {
                unlimited.push(index);
                continue;
            }
            None => continue,
        };
        let cost = match descriptor.hits_addend {
            Some(hits) => hits.value.max(1),
            None => request_cost,
        };
        found.push(Limited {
            index,
            rule: rule.clone(),
            identity: identity(&deciders.key, &request.domain, &entries),
            cost,
        });
    }
    let replaced: HashSet<String> = found
        .iter()
        .flat_map(|l| l.rule.replaces.iter().cloned())
        .collect();
    if !replaced.is_empty() {
        found.retain(|l| !replaced.contains(&l.rule.name));
    }
    (found, unlimited)
}

/// One bucket per domain and descriptor value: the digest of the domain and every entry.
fn identity(key: &IdentityKey, domain: &str, entries: &[(&str, &str)]) -> Identity {
    let mut text = Vec::with_capacity(64);
    text.extend_from_slice(domain.as_bytes());
    for (k, v) in entries {
        for part in [b"\0".as_slice(), k.as_bytes(), b"\0", v.as_bytes()] {
            text.extend_from_slice(part);
        }
    }
    Identity::of(key, "rls", &text)
}

async fn assess(deciders: &Deciders, takes: &[Take<'_>]) -> Result<Assessments, Undecided> {
    match deciders.limiter.acquire(takes).await {
        Ok(answers) if answers.len() == takes.len() => Ok(answers),
        Ok(_) | Err(_) => {
            let decided = deciders.fallback.decide(takes)?;
            deciders.metrics.store.fallbacks.inc();
            Ok(decided)
        }
    }
}

fn count(deciders: &Deciders, l: &Limited, a: &Assessment, enforced_ok: bool) {
    let decision = match (l.rule.shadow, a.allowed, enforced_ok) {
        (true, true, _) => Decision::Allowed,
        (true, false, _) => Decision::ShadowThrottled,
        (false, false, _) => Decision::Throttled,
        (false, true, true) => Decision::Allowed,
        (false, true, false) => Decision::ThrottledByOther,
    };
    let rule = &l.rule;
    rule.counters
        .of(&deciders.metrics, &rule.name)
        .count(decision);
}

/// `RateLimit-Policy`, `RateLimit` and, when refused, `Retry-After` of the most restrictive.
fn headers(standings: &[Standing<'_>]) -> Vec<HeaderValue> {
    let Some(i) = most_restrictive(standings) else {
        return Vec::new();
    };
    let s = &standings[i];
    let mut headers = vec![
        header("RateLimit-Policy", policy_text(s.policy, s.quota)),
        header("RateLimit", ratelimit_text(s)),
    ];
    if !s.assessment.allowed {
        headers.push(header("Retry-After", retry_after(s).to_string()));
    }
    headers
}

fn header(key: &str, value: String) -> HeaderValue {
    HeaderValue {
        key: key.to_owned(),
        value,
        ..HeaderValue::default()
    }
}

fn answer(
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
