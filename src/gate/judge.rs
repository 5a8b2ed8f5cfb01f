//! From the store's answers to a judgement, the same for every front door: each bucket's rule
//! counts its outcome (and its penalty events) on the trail, and the standing that describes
//! the request is picked. A refusal before any store call (a cost no bucket can hold, a caller
//! holding every slot) is counted here too, as is a store that could not decide. Only the
//! pipeline (`pipeline.rs`) calls these.

use super::trail::Trail;
use super::{most_restrictive, Few, HeaderQuota, LimitsOf, Standing};
use crate::limiter::{Assessment, Penalty};
use crate::policy::{Enforcement, QuotaCalendar};
use crate::telemetry::{PenaltyEvent, PolicyCounters, PolicyOutcome};
use std::sync::Arc;

/// One bucket a request draws on, as its front door states it: whether it enforces, what
/// counts its outcomes, and how its standing is described.
#[derive(Clone, Copy)]
pub struct Draw<'g> {
    /// Whether it refuses, or only counts.
    pub enforcement: Enforcement,
    /// Its rule's series.
    pub counters: &'g PolicyCounters,
    /// Its rule's name.
    pub policy: &'g Arc<str>,
    /// Which limits of the rule.
    pub level: LimitsOf,
    /// What the `RateLimit-Policy` header says of the bucket.
    pub quota: HeaderQuota,
    /// A calendar quota's calendar; `None` for a bucket.
    pub calendar: Option<&'g QuotaCalendar>,
    /// Tokens the request takes.
    pub cost: u64,
}

impl<'g> Draw<'g> {
    /// Whether the bucket can never admit the request: it enforces and its capacity is below
    /// the cost (a shadow bucket never refuses).
    pub(super) fn unpayable(&self) -> bool {
        self.enforcement.enforces() && self.cost > self.quota.capacity
    }

    /// How the bucket stands after `assessment`.
    fn standing(&self, assessment: Assessment) -> Standing<'g> {
        Standing {
            policy: self.policy,
            level: self.level,
            quota: self.quota,
            calendar: self.calendar,
            cost: self.cost,
            assessment,
        }
    }

    /// Counts `outcome` on `trail`, with what the bucket had `remaining`.
    fn note(&self, trail: &mut Trail<'g>, outcome: PolicyOutcome, remaining: Option<f64>) {
        trail.note(self.counters, self.policy, outcome, remaining);
    }
}

/// What the store's answers make of a request.
pub(super) struct Judgement<'g> {
    /// Every enforcing bucket paid (and nothing refused the request before).
    pub(super) passed: bool,
    /// The enforcing bucket that describes the request (its index among the draws) and its
    /// standing; none when only shadow buckets were drawn on.
    pub(super) deciding: Option<(usize, Standing<'g>)>,
}

/// Judges `assessments`, the store's answers for `draws` (in order): counts each draw's
/// outcome and penalty events on `trail`. `refused_before`: something else refused the
/// request already (the rate limit service's `requests_per_unit: 0`), so no enforcing bucket
/// lets it pass.
pub(super) fn judge<'g>(
    draws: &[Draw<'g>],
    assessments: &[Assessment],
    refused_before: bool,
    trail: &mut Trail<'g>,
) -> Judgement<'g> {
    let passed = !refused_before
        && draws
            .iter()
            .zip(assessments)
            .all(|(d, a)| d.enforcement.is_shadow() || a.is_allowed());
    let mut enforcing: Few<(usize, Standing<'g>)> = Few::new();
    for (i, (d, a)) in draws.iter().zip(assessments).enumerate() {
        let outcome = match (d.enforcement, passed, a.is_allowed()) {
            (Enforcement::Shadow, _, true) => PolicyOutcome::Allowed,
            (Enforcement::Shadow, _, false) => PolicyOutcome::ShadowThrottled,
            (Enforcement::Enforce, true, _) => PolicyOutcome::Allowed,
            (Enforcement::Enforce, false, false) => PolicyOutcome::Throttled,
            (Enforcement::Enforce, false, true) => PolicyOutcome::ThrottledByOther,
        };
        d.note(trail, outcome, Some(a.remaining()));
        match a.penalty() {
            Penalty::Started => d.counters.penalty(PenaltyEvent::Started),
            Penalty::Standing => d.counters.penalty(PenaltyEvent::Refused),
            Penalty::None => {}
        }
        if d.enforcement.enforces() {
            enforcing.push((i, d.standing(*a)));
        }
    }
    let standings: Few<Standing<'g>> = enforcing.iter().map(|(_, s)| *s).collect();
    let deciding = most_restrictive(&standings).map(|i| enforcing[i]);
    Judgement { passed, deciding }
}

/// A refusal by the draw at `index` before any store call: it counts throttled, the other
/// enforcing draws throttled by another (shadow draws count nothing: nothing was asked).
pub(super) fn count_refusal<'g>(draws: &[Draw<'g>], index: usize, trail: &mut Trail<'g>) {
    let enforcing = draws
        .iter()
        .enumerate()
        .filter(|(_, d)| d.enforcement.enforces());
    for (i, d) in enforcing {
        let outcome = match i == index {
            true => PolicyOutcome::Throttled,
            false => PolicyOutcome::ThrottledByOther,
        };
        d.note(trail, outcome, None);
    }
}

/// The store could not decide: every draw counts an error. Whether `on_error` applies: not
/// when only shadow buckets were drawn on (they never block).
pub(super) fn count_undecided<'g>(draws: &[Draw<'g>], trail: &mut Trail<'g>) -> bool {
    draws
        .iter()
        .for_each(|d| d.note(trail, PolicyOutcome::Error, None));
    draws.iter().any(|d| d.enforcement.enforces())
}
