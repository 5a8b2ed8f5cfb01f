//! How the store uses leases (`lease`): answering from a live lease, asking for one beside a
//! hot caller's decisions, and giving back what lapsed leases left unspent.

use super::knowledge::OwnedTake;
use super::lease::Refund;
use super::RedisStore;
use crate::limiter::{Assessments, BucketKey, BucketSpec, Mode, Take, Terms};
use smallvec::smallvec;
use std::sync::atomic::Ordering;
use std::time::Duration;

impl RedisStore {
    /// The answer from the caller's live lease, for a request of one enforcing take.
    pub(super) fn answer_from_lease(&self, takes: &[Take<'_>]) -> Option<Assessments> {
        let [take] = takes else { return None };
        if !leasable(take) {
            return None;
        }
        let key = (take.key.policy.id(), take.key.identity);
        let answer = self
            .leases
            .spend(key, take.spec, take.cost, self.clock.now_us())?;
        self.metrics.lease_hits.inc();
        Some(smallvec![answer])
    }

    /// After Redis allowed `takes`: if the caller is hot, asks for a lease in the next round.
    pub(super) fn after_allowed(&self, takes: &[Take<'_>]) {
        let [take] = takes else { return };
        if !leasable(take) {
            return;
        }
        let key = (take.key.policy.id(), take.key.identity);
        let now = self.clock.now_us();
        let Some(size) = self
            .leases
            .heat(key, take.spec, take.cost, self.fleet.get(), now)
        else {
            return;
        };
        // The lease is a shadow take: it pays if the bucket holds it, and never refuses.
        let lease = Take {
            cost: size,
            mode: Mode::Shadow,
            ..*take
        };
        let answer = self.batcher.submit(std::slice::from_ref(&lease), now);
        let owned = OwnedTake::from(take);
        let (leases, batcher, clock) = (self.leases.clone(), self.batcher.clone(), self.clock);
        let granted = self.metrics.leases.clone();
        tokio::spawn(async move {
            let take = owned.take();
            match answer.await {
                Ok(Ok((_, answers))) if answers.first().is_some_and(|a| a.allowed) => {
                    let remaining = answers[0].remaining;
                    let BucketKey { policy, identity } = take.key;
                    let now = clock.now_us();
                    if !keeps_exact(take.spec, remaining, size, leases.period_us()) {
                        // Redis's bucket could fill during the lease and drop refill the
                        // exact bucket would have kept: give the lease straight back.
                        leases.abandon(key);
                        batcher.refund(&Refund::of(policy, identity, take.spec, size), now);
                        return;
                    }
                    granted.inc();
                    let earlier = leases.grant(policy, identity, take.spec, size, remaining, now);
                    if let Some(refund) = earlier {
                        batcher.refund(&refund, now);
                    }
                }
                _ => leases.abandon(key),
            }
        });
        self.start_sweeping();
    }

    /// Starts (once) the task that gives back what lapsed leases left unspent.
    fn start_sweeping(&self) {
        if self.sweeping.swap(true, Ordering::AcqRel) {
            return;
        }
        let (leases, batcher, clock) = (self.leases.clone(), self.batcher.clone(), self.clock);
        let period = Duration::from_micros(leases.period_us().max(1));
        let refunds = self.metrics.lease_refunds.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(period);
            loop {
                tick.tick().await;
                let now = clock.now_us();
                for refund in leases.lapsed(now) {
                    refunds.inc();
                    batcher.refund(&refund, now);
                }
            }
        });
    }
}

/// Whether a lease of `lease` tokens keeps the fleet within the exact bucket. Redis's bucket
/// holds `remaining` after the lease left it, but the exact bucket still counts the leased
/// tokens until they are spent: it holds `remaining + lease`. If that cannot refill to capacity
/// within the lease's period, no refill is lost that the exact bucket would have kept (Redis's
/// bucket, lower by the lease, cannot fill either).
fn keeps_exact(spec: BucketSpec, remaining: f64, lease: f64, period_us: u64) -> bool {
    remaining + lease + spec.rate_per_second() * period_us as f64 / 1e6 <= spec.capacity()
}

/// Whether a take may be answered from a lease: an enforcing take on plain terms (a policy that
/// prepays or blocks needs every decision made by Redis).
fn leasable(take: &Take<'_>) -> bool {
    take.enforces() && take.terms == Terms::default()
}

impl super::batch::Batcher {
    /// Gives `refund`'s tokens back to its Redis bucket (a settlement of minus the tokens),
    /// in the next round; nobody waits for the answer.
    pub(super) fn refund(self: &std::sync::Arc<Self>, refund: &Refund, now_us: u64) {
        let take = Take {
            key: BucketKey {
                policy: &refund.policy,
                identity: refund.identity,
            },
            spec: refund.spec,
            cost: -refund.tokens,
            mode: Mode::Settle,
            terms: Terms::default(),
        };
        drop(self.submit(std::slice::from_ref(&take), now_us));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_is_kept_only_if_the_exact_bucket_with_it_cannot_fill_during_the_lease() {
        // Capacity 600 at 300/s, a lease of 10 for 100 ms: 30 tokens refill meanwhile.
        let spec = BucketSpec::new(600.0, 300.0).unwrap();
        let period_us = 100_000;
        assert!(
            keeps_exact(spec, 560.0, 10.0, period_us),
            "560 + 10 + 30 = 600"
        );
        assert!(
            !keeps_exact(spec, 565.0, 10.0, period_us),
            "565 + 30 fits Redis's bucket, but the exact one holds the lease too: 605 > 600"
        );
        assert!(
            !keeps_exact(spec, 0.0, 10.0, 3_000_000),
            "900 tokens refill in 3 s"
        );
    }
}
