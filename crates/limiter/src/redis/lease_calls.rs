//! How the store uses leases (`lease_ledger`): answering from a live lease, asking for one when a
//! caller gets hot or its lease runs low (the old one going back in the same call, just
//! before), and giving back every lease that lapses.

use super::knowledge::OwnedTake;
use super::lease_ledger::{Grant, Refund};
use super::RedisStore;
use crate::bucket::OnLease;
use crate::driver::Permission;
use crate::{Assessments, BucketKey, Mode, Take, Terms};
use smallvec::smallvec;
use std::sync::atomic::Ordering;
use std::time::Duration;

impl RedisStore {
    /// The answer from the caller's live lease, for a request of one enforcing take; renews
    /// the lease, without waiting, when it runs low.
    pub(super) fn answer_from_lease(&self, takes: &[Take<'_>]) -> Option<Assessments> {
        let [take] = takes else { return None };
        if !leasable(take) {
            return None;
        }
        let key = take.key.id();
        let now = self.clock.now_us();
        let spent = self
            .leases
            .spend(key, take.spec, take.cost, self.fleet.get(), now)?;
        self.metrics.lease_hits.inc();
        if let Some(size) = spent.renew {
            self.ask_for_lease(take, size, now);
        }
        Some(smallvec![spent.answer])
    }

    /// After Redis allowed `takes`: if the caller is hot and holds no lease, asks for one.
    pub(super) fn after_allowed(&self, takes: &[Take<'_>]) {
        let [take] = takes else { return };
        if !leasable(take) {
            return;
        }
        let key = take.key.id();
        let now = self.clock.now_us();
        if let Some(size) = self
            .leases
            .heat(key, take.spec, take.cost, self.fleet.get(), now)
        {
            self.ask_for_lease(take, size, now);
        }
    }

    /// Asks Redis, at `now_us`, to lend `size` tokens of `take`'s bucket, unless the breaker
    /// says not to. The caller's lease here, if any, goes back in the same call, just before:
    /// one read and one write of the bucket in Redis for both, and never two leases of one
    /// bucket out from one instance. A task installs the new lease when it comes and tells
    /// the breaker how the call went (an answer later than the budget is a failure), so a
    /// breaker opened while leases answer the requests still closes.
    fn ask_for_lease(&self, take: &Take<'_>, size: f64, now_us: u64) {
        let key = take.key.id();
        let permission = self.breaker.permit(now_us);
        if permission == Permission::Skip {
            self.leases.abandon(key);
            return;
        }
        let lease = Take {
            cost: size,
            mode: Mode::Lease,
            ..*take
        };
        let earlier = self.leases.take_out(key);
        let returned = earlier.as_ref().map(Refund::take);
        let answer =
            self.batcher
                .submit_after(returned.as_slice(), std::slice::from_ref(&lease), now_us);
        let owned = OwnedTake::from(take);
        let (leases, batcher, clock) = (self.leases.clone(), self.batcher.clone(), self.clock);
        let (breaker, budget_us) = (self.breaker.clone(), self.timeout.as_micros() as u64);
        let granted = self.metrics.leases.clone();
        tokio::spawn(async move {
            let take = owned.take();
            let answer = answer.await;
            let answered_at = clock.now_us();
            let in_time = answered_at.saturating_sub(now_us) <= budget_us;
            breaker.record(
                answered_at,
                in_time && matches!(answer, Ok(Ok(_))),
                permission,
            );
            match answer {
                Ok(Ok((redis_now, answers))) if answers.first().is_some_and(|a| a.is_allowed()) => {
                    granted.inc();
                    let earlier = leases.grant(Grant {
                        policy: take.key.policy,
                        identity: take.key.identity,
                        spec: take.spec,
                        size,
                        window: OnLease::window_of(redis_now),
                        redis_remaining: answers[0].remaining(),
                        asked_us: now_us,
                    });
                    if let Some(refund) = earlier {
                        batcher.give_back(&refund, clock.now_us());
                    }
                }
                _ => leases.abandon(key),
            }
        });
        self.start_sweeping();
    }

    /// Starts (once) the task that gives back lapsed leases, four times a period.
    fn start_sweeping(&self) {
        if self.sweeping.swap(true, Ordering::AcqRel) {
            return;
        }
        let (leases, batcher, clock) = (self.leases.clone(), self.batcher.clone(), self.clock);
        let period = Duration::from_micros((leases.period_us() / 4).max(1));
        let refunds = self.metrics.lease_refunds.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(period);
            loop {
                tick.tick().await;
                let now = clock.now_us();
                for refund in leases.lapsed(now) {
                    refunds.inc();
                    batcher.give_back(&refund, now);
                }
            }
        });
    }
}

/// Whether a take may be answered from a lease: an enforcing take on plain terms (a policy that
/// prepays or blocks needs every decision made by Redis), from a bucket, not a quota (a lease
/// lent before a period's end would be spent after it, and the period's count must be exact).
fn leasable(take: &Take<'_>) -> bool {
    take.enforces() && take.terms == Terms::default() && take.spec.periods().is_none()
}

impl Refund {
    /// The take that sends this lease back to its Redis bucket: its size off the count of
    /// tokens out, its unspent tokens back in.
    fn take(&self) -> Take<'_> {
        Take {
            key: BucketKey {
                policy: &self.policy,
                identity: self.identity,
            },
            spec: self.spec,
            cost: -self.unspent,
            mode: Mode::Return {
                leased: self.leased,
                window: self.window,
            },
            terms: Terms::default(),
        }
    }
}

impl super::batch::Batcher {
    /// Sends a lease back to its Redis bucket in the next round; nobody waits for the answer.
    pub(super) fn give_back(self: &std::sync::Arc<Self>, refund: &Refund, now_us: u64) {
        self.post(std::slice::from_ref(&refund.take()), now_us);
    }
}
