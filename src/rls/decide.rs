//! One `ShouldRateLimit`: the request's descriptors meet their limits (a limit that
//! `replaces` another drops it), every limited descriptor's bucket is taken in one
//! all-or-nothing call to the store (`hits_addend` is the cost), and the answer says, per
//! descriptor and overall, OK or OVER_LIMIT, with the draft-10 RateLimit headers (and
//! `Retry-After`) of the most restrictive limit for Envoy to pass to the client. When the store
//! cannot decide within the service's budget, `on_error` does, as for the proxy: Envoy gets an
//! answer in time, not an error. A cost no limit could ever admit is refused without asking.
//!
//! The pipeline (the refusal of a cost no limit can hold, the store call, `on_error`, the
//! judgement: counting, penalties, the most restrictive limit) is the gate's, as for the
//! proxy; this file only translates descriptors into draws and takes and what the pipeline
//! drew into Envoy's answer.

use super::answer::{answer, headers, limit_status, status, unpayable};
use super::limited::Limited;
use super::lookup::find;
use super::rules::{Effect, RlsRules};
use crate::gate::{Drawn, Judged, Pipeline, Trail};
use crate::identity::{Identity, IdentityKey};
use crate::limiter::{Fallback, Limiter, Take, Undecided};
use crate::policy::Enforcement;
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

/// The parts of [`Deciders`] as answering uses them: the gate's pipeline, within
/// `rls.timeout`.
pub struct Answering {
    pipeline: Pipeline,
    key: IdentityKey,
    metrics: Arc<Metrics>,
}

impl From<Deciders> for Answering {
    fn from(d: Deciders) -> Self {
        Self {
            pipeline: Pipeline::new(d.limiter, d.fallback, &d.metrics).within(d.timeout),
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
    let refusing = limited.iter().filter(|l| l.rule.refuses_all);
    let mut refused_by_rule = false;
    for l in refusing {
        let code = match l.rule.enforcement {
            Enforcement::Enforce => Code::OverLimit,
            Enforcement::Shadow => Code::Ok,
        };
        refused_by_rule |= code == Code::OverLimit;
        statuses[l.index] = status(&l.rule, code, 0.0, 0);
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
    // The trail explains nothing here yet: Envoy's answer says per descriptor what happened.
    let mut trail = Trail::default();
    let draws = limited.iter().map(|l| l.draw(&answering.metrics)).collect();
    let takes: Vec<Take<'_>> = limited.iter().map(Limited::take).collect();
    let drawn = answering
        .pipeline
        .decide(draws, &takes, refused_by_rule, &mut trail)
        .await;
    match drawn {
        Drawn::Judged(judged) => answer_judged(&limited, &judged, statuses),
        Drawn::Unpayable(i) => unpayable_answer(&limited, i, statuses),
        Drawn::Undecided(Undecided::Refuse) => {
            for s in &mut statuses {
                s.code = Code::OverLimit as i32;
            }
            answer(Code::OverLimit, statuses, Vec::new())
        }
        // `on_error = "allow"`, or only shadow limits (they never refuse).
        Drawn::Undecided(Undecided::Pass) | Drawn::Spared => answer(Code::Ok, statuses, Vec::new()),
    }
}

/// The answer from the pipeline's judgement of `limited`: OK only if every enforcing limit
/// paid and no rule refused outright, with the headers of the most restrictive limit.
fn answer_judged(
    limited: &[Limited],
    judged: &Judged<'_>,
    mut statuses: Vec<DescriptorStatus>,
) -> RateLimitResponse {
    for (l, a) in limited.iter().zip(&judged.assessments) {
        let code = match (l.rule.enforcement, a.is_allowed()) {
            (Enforcement::Shadow, _) | (Enforcement::Enforce, true) => Code::Ok,
            (Enforcement::Enforce, false) => Code::OverLimit,
        };
        let reset_us = match code {
            Code::OverLimit => a.wait_us(),
            _ => a.full_in_us(),
        };
        statuses[l.index] = status(&l.rule, code, a.remaining(), reset_us);
    }
    let code = if judged.passed {
        Code::Ok
    } else {
        Code::OverLimit
    };
    let deciding = judged.deciding.map(|(_, standing)| standing);
    answer(code, statuses, headers(deciding.as_ref()))
}

/// The refusal of a request whose descriptor at `unpayable_at` costs more than its limit can
/// ever hold (the pipeline counted it): no bucket is taken (all or nothing); every enforcing
/// limit says OVER_LIMIT, that one with nothing remaining.
fn unpayable_answer(
    limited: &[Limited],
    unpayable_at: usize,
    mut statuses: Vec<DescriptorStatus>,
) -> RateLimitResponse {
    let enforcing = limited
        .iter()
        .enumerate()
        .filter(|(_, l)| l.rule.enforcement.enforces());
    for (i, l) in enforcing {
        // Only the refusing limit is short; the others had the tokens.
        let code = match i == unpayable_at {
            true => Code::OverLimit,
            false => Code::Ok,
        };
        statuses[l.index] = limit_status(&l.rule, code, 0.0);
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
            Some(Effect::Limit(rule)) => rule,
            Some(Effect::Unlimited) => {
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
