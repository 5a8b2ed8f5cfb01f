//! `max_delay`: a request whose tokens (or concurrency slot) come within `max_delay` is held,
//! then forwarded, instead of refused. Only a request with a permit may be held: at most
//! `max_held` per policy on one instance, so a flood cannot park unbounded requests here.
//!
//! A held request keeps the concurrency slot it took while it waits for its tokens. Taking the
//! slot after the wait instead would break exactness: the wait is for tokens already taken
//! (borrowed, and later requests were told to queue behind them), so a request that found no
//! slot then would either be refused having paid (a refund cannot give back its place in the
//! queue the others already wait behind), or wait again, beyond `max_delay`; letting the slot
//! go during the wait and taking it back has the same flaw. And a held request is admitted and
//! under way at the proxy (it holds its connection), which is what `max_in_flight` caps.

use super::bound::{BoundPolicy, Planned};
use crate::limiter::Assessment;
use crate::telemetry::HeldResult;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// One of a policy's `max_held` places; given back when dropped.
pub(crate) struct HeldPermit<'g> {
    bound: &'g BoundPolicy,
    holding: bool,
}

impl BoundPolicy {
    /// A place to hold one more request, unless the policy does not shape or `max_held`
    /// requests hold all its places.
    pub(crate) fn try_hold(&self) -> Option<HeldPermit<'_>> {
        let max = self.policy.limit()?.rules.shaping?.max_held;
        self.held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()?;
        Some(HeldPermit {
            bound: self,
            holding: false,
        })
    }
}

impl HeldPermit<'_> {
    /// Marks the request as held (`floodgate_held_requests`) until the permit is dropped.
    pub(crate) fn start_holding(&mut self) {
        if !std::mem::replace(&mut self.holding, true) {
            self.bound.counters.held_now.inc();
        }
    }
}

impl Drop for HeldPermit<'_> {
    fn drop(&mut self) {
        if self.holding {
            self.bound.counters.held_now.dec();
        }
        self.bound.held.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Holds an allowed request until the tokens its policies prepaid would have been there: the
/// longest wait among its takes. Each policy that prepaid counts one held request.
pub(crate) async fn hold(
    planned: &[Planned<'_>],
    assessments: &[Assessment],
    permits: &mut [Option<HeldPermit<'_>>],
) {
    let mut wait_us = 0;
    for ((p, a), permit) in planned.iter().zip(assessments).zip(permits.iter_mut()) {
        if !a.is_allowed() || a.wait_us() == 0 || p.is_shadow() {
            continue;
        }
        // Only a take with a permit had an overdraft, so only such a take can wait.
        if let Some(permit) = permit {
            permit.start_holding();
            p.counters().held(HeldResult::Held);
            wait_us = wait_us.max(a.wait_us());
        }
    }
    if wait_us > 0 {
        tokio::time::sleep(Duration::from_micros(wait_us)).await;
    }
}
