//! One `ShouldRateLimit`: the request's descriptors meet their limits (a limit that
//! `replaces` another drops it), every limited descriptor's bucket is taken in one
//! all-or-nothing call to the store (`hits_addend` is the cost), and the answer says, per
//! descriptor and overall, OK or OVER_LIMIT, with the draft-10 RateLimit headers (and
//! `Retry-After`) of the most restrictive limit for Envoy to pass to the client. When the store
//! cannot decide within the service's budget, `on_error` does, as for the proxy: Envoy gets an
//! answer in time, not an error. A cost no limit could ever admit is refused without asking.
//!
//! The store call, `on_error` and the judgement (counting, penalties, the most restrictive
//! limit) are the gate's, as for the proxy; this file only translates descriptors into takes
//! and the judgement into Envoy's answer.

use super::answer::{answer, headers, limit_status, status, unpayable};
use super::limited::Limited;
use super::lookup::find;
use super::rules::{Action, RlsRules};
use crate::gate::{count_refusal, count_undecided, judge, Draw, StoreCall};
use crate::identity::{Identity, IdentityKey};
use crate::limiter::{Assessment, Fallback, Limiter, Take, Undecided};
use crate::telemetry::Metrics;
use envoy_types::pb::envoy::service::ratelimit::v3::rate_limit_response::{Code, DescriptorStatus};
use envoy_types::pb::envoy::service::ratelimit::v3::{RateLimitRequest, RateLimitResponse};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

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
    /// How long the store may take before `fallback` decides (`rls.timeout`).
    pub timeout: Duration,
}

/// The parts of [`Deciders`] as answering uses them: the gate's store call, within
/// `rls.timeout`.
pub struct Answering {
    store: StoreCall,
    key: IdentityKey,
    metrics: Arc<Metrics>,
}

impl From<Deciders> for Answering {
    fn from(d: Deciders) -> Self {
        Self {
            store: StoreCall::new(d.limiter, d.fallback, &d.metrics).within(d.timeout),
            key: d.key,
            metrics: d.metrics,
        }
    }
}

/// The answer to `request` under `rules`.
pub async fn decide(
    rules: &RlsRules,
    answering: &Answering,
    request: &RateLimitRequest,
) -> RateLimitResponse {
    let (limited, unlimited) = limited(rules, &answering.key, request);
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
        statuses[l.index] = status(&l.rule, l.rule.shadow, 0.0, 0);
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
    let draws: Vec<Draw<'_>> = limited.iter().map(|l| l.draw(&answering.metrics)).collect();
    if let Some(i) = draws.iter().position(Draw::unpayable) {
        return refuse_unpayable(&limited, &draws, i, statuses);
    }
    let takes: Vec<Take<'_>> = limited.iter().map(Limited::take).collect();
    match answering.store.ask(&takes).await {
        Ok(assessments) => judged(&limited, &draws, &assessments, refused_by_rule, statuses),
        Err(undecided) => {
            count_undecided(&draws);
            match undecided {
                Undecided::Pass => answer(Code::Ok, statuses, Vec::new()),
                Undecided::Refuse => {
                    for s in &mut statuses {
                        s.code = Code::OverLimit as i32;
                    }
                    answer(Code::OverLimit, statuses, Vec::new())
                }
            }
        }
    }
}

/// The answer from the store's `assessments` of `limited` (judged as `draws` by the gate):
/// OK only if every enforcing limit paid and no rule refused outright, with the headers of
/// the most restrictive limit.
fn judged(
    limited: &[Limited],
    draws: &[Draw<'_>],
    assessments: &[Assessment],
    refused_by_rule: bool,
    mut statuses: Vec<DescriptorStatus>,
) -> RateLimitResponse {
    let judgement = judge(draws, assessments, refused_by_rule);
    for (l, a) in limited.iter().zip(assessments) {
        let allowed = l.rule.shadow || a.is_allowed();
        let reset_us = if allowed { a.full_in_us() } else { a.wait_us() };
        statuses[l.index] = status(&l.rule, allowed, a.remaining(), reset_us);
    }
    let code = if judgement.passed {
        Code::Ok
    } else {
        Code::OverLimit
    };
    let deciding = judgement.deciding.map(|(_, standing)| standing);
    answer(code, statuses, headers(deciding.as_ref()))
}

/// The refusal of a request whose descriptor at `unpayable_at` costs more than its limit can
/// ever hold: no bucket is taken (all or nothing), that limit counts it throttled and the other
/// enforcing ones throttled by another.
fn refuse_unpayable(
    limited: &[Limited],
    draws: &[Draw<'_>],
    unpayable_at: usize,
    mut statuses: Vec<DescriptorStatus>,
) -> RateLimitResponse {
    count_refusal(draws, unpayable_at);
    for (i, l) in limited.iter().enumerate().filter(|(_, l)| !l.rule.shadow) {
        statuses[l.index] = limit_status(&l.rule, i != unpayable_at, 0.0);
    }
    let l = &limited[unpayable_at];
    unpayable(&l.rule, l.cost, statuses)
}

/// The request's limited descriptors, after `replaces`, and the positions of its unlimited
/// ones.
fn limited(
    rules: &RlsRules,
    key: &IdentityKey,
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
            identity: identity(key, &request.domain, &entries),
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
