//! The gate's verdict from the pipeline's judgement of the store's answers (`pipeline.rs`):
//! the standing that describes the request, about which caller; and the refusals made before
//! any store call.

use super::outcome::Busy;
use super::pipeline::Judged;
use super::standing::stable_caller;
use super::{Decided, Outcome, Planned};

/// What the store's answers make of a request.
pub(super) enum Verdict<'g> {
    /// Every enforcing bucket paid.
    Allowed(Decided<'g>),
    /// An enforcing bucket could not pay.
    Throttled(Decided<'g>),
    /// Only shadow policies are on the route.
    ShadowOnly,
}

/// The verdict from the pipeline's judgement of `planned` (one draw per planned policy).
pub(super) fn verdict<'g>(planned: &[Planned<'g>], judgement: &Judged<'g>) -> Verdict<'g> {
    let Some((index, standing)) = judgement.deciding else {
        return Verdict::ShadowOnly;
    };
    let p = &planned[index];
    let decided = Decided {
        standing,
        identity: p.identity(),
        source: p.source(),
        caller: stable_caller(planned).unwrap_or(p.identity()),
    };
    match judgement.passed {
        true => Verdict::Allowed(decided),
        false => Verdict::Throttled(decided),
    }
}

/// The refusal of a caller holding every slot (`limit`) of the planned policy at `index` (the
/// pipeline counted it: that policy throttled, the other enforcing ones throttled by another).
pub(super) fn busy<'g>(planned: &[Planned<'g>], index: usize, limit: u32) -> Outcome<'g> {
    let p = &planned[index];
    Outcome::Busy(Busy {
        policy: p.bound().policy.name(),
        limit,
        identity: p.identity(),
        source: p.source(),
        caller: stable_caller(planned).unwrap_or(p.identity()),
    })
}

/// The refusal of a request the planned policy at `index` can never admit (its cost is above
/// the bucket's capacity; the pipeline counted it); no store is asked.
pub(super) fn unpayable<'g>(planned: &[Planned<'g>], index: usize) -> Outcome<'g> {
    let p = &planned[index];
    Outcome::Unpayable(p.unpayable_refusal(stable_caller(planned).unwrap_or(p.identity())))
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
            clock: crate::clock::Clock::System,
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
        let Outcome::Unpayable(refusal) = gate.decide(&req, &route).await.outcome else {
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
            let outcome = gate.decide(&req, &route).await.outcome;
            assert!(matches!(outcome, Outcome::Allowed(..)), "{outcome:?}");
        }
    }
}
