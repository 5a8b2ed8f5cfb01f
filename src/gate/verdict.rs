//! From the store's answers to a verdict: each policy counts its decision (and its penalty
//! events), and the standing that describes the request is picked.

use super::outcome::Busy;
use super::standing::stable_caller;
use super::{most_restrictive, Decided, Few, Outcome, Planned, Standing};
use crate::limiter::{Assessments, Penalty};
use crate::telemetry::{Decision, PenaltyEvent};

/// What the store's answers make of a request.
pub(super) enum Verdict<'g> {
    /// Every enforcing bucket paid.
    Allowed(Decided<'g>),
    /// An enforcing bucket could not pay.
    Throttled(Decided<'g>),
    /// Only shadow policies are on the route.
    ShadowOnly,
}

/// Counts each policy's decision and picks the verdict from the store's `assessments`.
pub(super) fn verdict<'g>(planned: &[Planned<'g>], assessments: &Assessments) -> Verdict<'g> {
    let passed = planned
        .iter()
        .zip(assessments)
        .all(|(p, a)| p.is_shadow() || a.allowed);
    let mut enforcing: Few<(Standing<'g>, &Planned<'g>)> = Few::new();
    for (p, a) in planned.iter().zip(assessments) {
        let counters = p.counters();
        counters.count(match (p.is_shadow(), passed, a.allowed) {
            (true, _, true) => Decision::Allowed,
            (true, _, false) => Decision::ShadowThrottled,
            (false, true, _) => Decision::Allowed,
            (false, false, false) => Decision::Throttled,
            (false, false, true) => Decision::ThrottledByOther,
        });
        match a.penalty {
            Penalty::Started => counters.penalty(PenaltyEvent::Started),
            Penalty::Standing => counters.penalty(PenaltyEvent::Refused),
            Penalty::None => {}
        }
        if !p.is_shadow() {
            enforcing.push((p.standing(*a), p));
        }
    }
    let standings: Few<Standing<'g>> = enforcing.iter().map(|(s, _)| *s).collect();
    let Some(index) = most_restrictive(&standings) else {
        return Verdict::ShadowOnly;
    };
    let (standing, p) = enforcing[index];
    let decided = Decided {
        standing,
        identity: p.identity(),
        caller: stable_caller(planned).unwrap_or(p.identity()),
    };
    match passed {
        true => Verdict::Allowed(decided),
        false => Verdict::Throttled(decided),
    }
}

/// The refusal of a caller holding every slot of the planned policy at `index`: that policy
/// counts it as throttled, the other enforcing ones as throttled by another.
pub(super) fn busy<'g>(planned: &[Planned<'g>], index: usize) -> Outcome<'g> {
    for (i, p) in planned.iter().enumerate().filter(|(_, p)| !p.is_shadow()) {
        p.counters().count(match i == index {
            true => Decision::Throttled,
            false => Decision::ThrottledByOther,
        });
    }
    let p = &planned[index];
    Outcome::Busy(Busy {
        policy: p.bound().policy.name(),
        limit: p.rules().max_in_flight.unwrap_or(0),
        identity: p.identity(),
        caller: stable_caller(planned).unwrap_or(p.identity()),
    })
}
