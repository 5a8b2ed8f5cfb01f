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
        .all(|(p, a)| p.is_shadow() || a.is_allowed());
    let mut enforcing: Few<(Standing<'g>, &Planned<'g>)> = Few::new();
    for (p, a) in planned.iter().zip(assessments) {
        let counters = p.counters();
        counters.count(match (p.is_shadow(), passed, a.is_allowed()) {
            (true, _, true) => Decision::Allowed,
            (true, _, false) => Decision::ShadowThrottled,
            (false, true, _) => Decision::Allowed,
            (false, false, false) => Decision::Throttled,
            (false, false, true) => Decision::ThrottledByOther,
        });
        match a.penalty() {
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
    count_refusal(planned, index);
    let p = &planned[index];
    Outcome::Busy(Busy {
        policy: p.bound().policy.name(),
        limit: p.rules().max_in_flight.unwrap_or(0),
        identity: p.identity(),
        caller: stable_caller(planned).unwrap_or(p.identity()),
    })
}

/// The refusal of a request the planned policy at `index` can never admit (its cost is above
/// the bucket's capacity): that policy counts it as throttled, the other enforcing ones as
/// throttled by another; no store is asked.
pub(super) fn unpayable<'g>(planned: &[Planned<'g>], index: usize) -> Outcome<'g> {
    count_refusal(planned, index);
    let p = &planned[index];
    Outcome::Unpayable(p.unpayable_refusal(stable_caller(planned).unwrap_or(p.identity())))
}

/// A refusal by the planned policy at `index` before any store call: it counts throttled, the
/// other enforcing policies throttled by another.
fn count_refusal(planned: &[Planned<'_>], index: usize) {
    for (i, p) in planned.iter().enumerate().filter(|(_, p)| !p.is_shadow()) {
        p.counters().count(match i == index {
            true => Decision::Throttled,
            false => Decision::ThrottledByOther,
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::control::{Control, Entry, Kind, Override};
    use crate::gate::{Deciders, Gate, Outcome};
    use crate::identity::{IdentityKey, Request};
    use crate::limiter::{Fallback, MemorySlots, MemoryStore};
    use crate::policy::RouteFacts;
    use crate::telemetry::Metrics;
    use http::{HeaderMap, Method};
    use std::sync::Arc;

    /// A gate on the memory store whose one policy costs 5 of a capacity of 10, and its
    /// control.
    fn gate() -> (Gate, Arc<Control>) {
        let text = "[server]\nlisten = \"127.0.0.1:8080\"\n\n\
                    [upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n\
                    [[policy]]\nname = \"per-ip\"\ncapacity = 10\nrate = \"1/h\"\ncost = 5\n";
        let config = crate::config::parse(text, std::path::Path::new("t.toml")).unwrap();
        let limiter = Arc::new(MemoryStore::new(1000));
        let control = Arc::new(Control::in_process(limiter.clone()));
        let deciders = Deciders {
            control: control.clone(),
            limiter,
            in_flight: Arc::new(MemorySlots::new()),
            fallback: Fallback::Deny,
        };
        let gate = Gate::new(
            config.access.clone(),
            &config.policies,
            config.identity.clone(),
            IdentityKey::from_bytes([7; 32]),
            deciders,
            &Metrics::new(),
        );
        (gate, control)
    }

    fn shrink_to(capacity: u64, caller: String) -> Entry {
        Entry::Override(Override {
            id: 0,
            policy: "per-ip".into(),
            source: "ip".into(),
            caller,
            capacity,
            rate: "1/h".into(),
            quota: None,
            reason: "test".into(),
            by: "ops".into(),
            created_at_ms: 0,
            expires_at_ms: None,
        })
    }

    #[tokio::test]
    async fn a_cost_above_the_capacity_is_refused_without_a_wait_or_a_token() {
        let (gate, control) = gate();
        let headers = HeaderMap::new();
        let req = Request::new(&headers, None, "192.0.2.1".parse().ok(), None);
        let route = RouteFacts {
            method: &Method::GET,
            host: None,
            path: "/",
        };
        let caller = gate.identity().identify(&req, gate.digest_key()).unwrap();
        let kept = control
            .add(shrink_to(2, caller.hex()), None, "k1")
            .await
            .unwrap();
        let Outcome::Unpayable(refusal) = gate.decide(&req, &route).await else {
            panic!("a cost of 5 against a capacity of 2 can never pass");
        };
        assert_eq!((refusal.cost, refusal.quota.capacity), (5, 2));
        assert_eq!(&**refusal.policy, "per-ip");
        assert_eq!(refusal.identity, caller);
        let crate::control::Added::Created(Entry::Override(kept)) = kept else {
            panic!("a new override");
        };
        assert!(control.remove(Kind::Override, kept.id, "k2").await.unwrap());
        for _ in 0..2 {
            let outcome = gate.decide(&req, &route).await;
            assert!(matches!(outcome, Outcome::Allowed(..)), "{outcome:?}");
        }
    }
}
