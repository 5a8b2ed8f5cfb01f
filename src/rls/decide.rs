//! One `ShouldRateLimit`: the request's descriptors meet their limits (a limit that
//! `replaces` another drops it), every limited descriptor's bucket is taken in one
//! all-or-nothing call to the store (`hits_addend` is the cost), and the answer says, per
//! descriptor and overall, OK or OVER_LIMIT, with the draft-10 RateLimit headers (and
//! `Retry-After`) of the most restrictive limit for Envoy to pass to the client. When the store
//! cannot decide within the service's budget, `on_error` does, as for the proxy: Envoy gets an
//! answer in time, not an error. A cost no limit could ever admit is refused without asking.

use super::answer::{answer, headers, limit_status, status, unpayable};
use super::budget::Budget;
use super::limited::Limited;
use super::lookup::find;
use super::rules::{Action, RlsRules, Rule};
use crate::gate::{LevelId, Quota, Standing};
use crate::identity::{Identity, IdentityKey};
use crate::limiter::{Assessment, Fallback, Limiter, Undecided};
use crate::telemetry::{Decision, Metrics};
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
        statuses[l.index] = status(&l.rule, l.rule.shadow, 0.0, 0);
    }
    let limited: Arc<[Limited]> = limited
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
    if let Some(i) = limited.iter().position(Limited::unpayable) {
        return refuse_unpayable(deciders, &limited, i, statuses);
    }
    let budget = Budget {
        limiter: &deciders.limiter,
        fallback: &deciders.fallback,
        timeout: deciders.timeout,
        metrics: &deciders.metrics,
    };
    match budget.assess(&limited).await {
        Ok(assessments) => judge(deciders, &limited, &assessments, refused_by_rule, statuses),
        Err(Undecided::Pass) => answer(Code::Ok, statuses, Vec::new()),
        Err(Undecided::Refuse) => {
            for s in &mut statuses {
                s.code = Code::OverLimit as i32;
            }
            answer(Code::OverLimit, statuses, Vec::new())
        }
    }
}

/// The answer from the store's `assessments` of `limited`: counted per rule, OK only if every
/// enforcing limit paid and no rule refused outright.
fn judge(
    deciders: &Deciders,
    limited: &[Limited],
    assessments: &[Assessment],
    refused_by_rule: bool,
    mut statuses: Vec<DescriptorStatus>,
) -> RateLimitResponse {
    let enforced_ok = !refused_by_rule
        && limited
            .iter()
            .zip(assessments)
            .all(|(l, a)| l.rule.shadow || a.is_allowed());
    let mut standings = Vec::with_capacity(limited.len());
    for (l, a) in limited.iter().zip(assessments) {
        let allowed = l.rule.shadow || a.is_allowed();
        let decision = match (l.rule.shadow, a.is_allowed(), enforced_ok) {
            (true, true, _) => Decision::Allowed,
            (true, false, _) => Decision::ShadowThrottled,
            (false, false, _) => Decision::Throttled,
            (false, true, true) => Decision::Allowed,
            (false, true, false) => Decision::ThrottledByOther,
        };
        count(deciders, &l.rule, decision);
        let reset_us = if allowed { a.full_in_us() } else { a.wait_us() };
        statuses[l.index] = status(&l.rule, allowed, a.remaining(), reset_us);
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

/// The refusal of a request whose descriptor at `unpayable` costs more than its limit can
/// ever hold: no bucket is taken (all or nothing), that limit counts it throttled and the other
/// enforcing ones throttled by another.
fn refuse_unpayable(
    deciders: &Deciders,
    limited: &[Limited],
    unpayable_at: usize,
    mut statuses: Vec<DescriptorStatus>,
) -> RateLimitResponse {
    for (i, l) in limited.iter().enumerate().filter(|(_, l)| !l.rule.shadow) {
        let refused = i == unpayable_at;
        count(
            deciders,
            &l.rule,
            match refused {
                true => Decision::Throttled,
                false => Decision::ThrottledByOther,
            },
        );
        statuses[l.index] = limit_status(&l.rule, !refused, 0.0);
    }
    let l = &limited[unpayable_at];
    unpayable(&l.rule, l.cost, statuses)
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

/// Counts `decision` under `rule`.
fn count(deciders: &Deciders, rule: &Rule, decision: Decision) {
    rule.counters
        .of(&deciders.metrics, &rule.name)
        .count(decision);
}
