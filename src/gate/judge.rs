//! From the store's answers to a judgement, the same for every front door: each bucket's rule
//! counts its decision (and its penalty events), and the standing that describes the request
//! is picked. A refusal before any store call (a cost no bucket can hold) is counted here too,
//! as is a store that could not decide.

use super::{most_restrictive, Few, HeaderQuota, LevelId, Standing};
use crate::limiter::{Assessment, Penalty};
use crate::policy::QuotaCalendar;
use crate::telemetry::{Decision, PenaltyEvent, PolicyCounters};
use std::sync::Arc;

/// One bucket a request draws on, as its front door planned it: whether it enforces, what
/// counts its decisions, and how its standing is described.
#[derive(Clone, Copy)]
pub struct Draw<'g> {
    /// Counts but never refuses.
    pub shadow: bool,
    /// Its rule's series.
    pub counters: &'g PolicyCounters,
    /// Its rule's name.
    pub policy: &'g Arc<str>,
    /// Which limits of the rule.
    pub level: LevelId,
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
    pub fn unpayable(&self) -> bool {
        !self.shadow && self.cost > self.quota.capacity
    }

    /// How the bucket stands after `assessment`.
    pub fn standing(&self, assessment: Assessment) -> Standing<'g> {
        Standing {
            policy: self.policy,
            level: self.level,
            quota: self.quota,
            calendar: self.calendar,
            cost: self.cost,
            assessment,
        }
    }
}

/// What the store's answers make of a request.
pub struct Judgement<'g> {
    /// Every enforcing bucket paid (and nothing refused the request before).
    pub passed: bool,
    /// The enforcing bucket that describes the request (its index among the draws) and its
    /// standing; none when only shadow buckets were drawn on.
    pub deciding: Option<(usize, Standing<'g>)>,
}

/// Judges `assessments`, the store's answers for `draws` (in order): counts each draw's
/// decision and penalty events. `refused_before`: something else refused the request already
/// (the rate limit service's `requests_per_unit: 0`), so no enforcing bucket lets it pass.
pub fn judge<'g>(
    draws: &[Draw<'g>],
    assessments: &[Assessment],
    refused_before: bool,
) -> Judgement<'g> {
    let passed = !refused_before
        && draws
            .iter()
            .zip(assessments)
            .all(|(d, a)| d.shadow || a.is_allowed());
    let mut enforcing: Few<(usize, Standing<'g>)> = Few::new();
    for (i, (d, a)) in draws.iter().zip(assessments).enumerate() {
        d.counters.count(match (d.shadow, passed, a.is_allowed()) {
            (true, _, true) => Decision::Allowed,
            (true, _, false) => Decision::ShadowThrottled,
            (false, true, _) => Decision::Allowed,
            (false, false, false) => Decision::Throttled,
            (false, false, true) => Decision::ThrottledByOther,
        });
        match a.penalty() {
            Penalty::Started => d.counters.penalty(PenaltyEvent::Started),
            Penalty::Standing => d.counters.penalty(PenaltyEvent::Refused),
            Penalty::None => {}
        }
        if !d.shadow {
            enforcing.push((i, d.standing(*a)));
        }
    }
    let standings: Few<Standing<'g>> = enforcing.iter().map(|(_, s)| *s).collect();
    let deciding = most_restrictive(&standings).map(|i| enforcing[i]);
    Judgement { passed, deciding }
}

/// A refusal by the draw at `index` before any store call: it counts throttled, the other
/// enforcing draws throttled by another.
pub fn count_refusal(draws: &[Draw<'_>], index: usize) {
    for (i, d) in draws.iter().enumerate().filter(|(_, d)| !d.shadow) {
        d.counters.count(match i == index {
            true => Decision::Throttled,
            false => Decision::ThrottledByOther,
        });
    }
}

/// The store could not decide: every draw counts an error. Whether `on_error` applies: not
/// when only shadow buckets were drawn on (they never block).
pub fn count_undecided(draws: &[Draw<'_>]) -> bool {
    draws.iter().for_each(|d| d.counters.count(Decision::Error));
    draws.iter().any(|d| !d.shadow)
}
