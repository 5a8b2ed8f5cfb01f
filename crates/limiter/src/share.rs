//! This instance's share of the fleet's buckets, decided locally when the shared store cannot.
//!
//! With N instances, a caller's local bucket holds capacity ÷ N (at least one request's cost)
//! and refills at rate ÷ N, so N instances deciding alone admit about one limit together. It
//! does not start full: every answer the store gives about a caller (on time or late) is
//! mirrored here as that caller's share of what the store said was left. A caller the store
//! never answered about starts with a full share. Concurrency slots (`max_in_flight`) are
//! shared the same way: this instance holds at most its share of a caller's slots.
//!
//! The mirror only ever lowers a local bucket. An answer describes the store's bucket when the
//! store computed it; by the time it arrives (late, or behind a slower one) this instance may
//! have decided requests locally, and writing the store's figure over them would hand those
//! tokens out again. So a caller's local level becomes the lower of its level now (refilled to
//! now; an unknown bucket is full) and the store's share, read and written under the lock the
//! caller's local takes use ([`MemoryStore::lower_at`]). Tokens come back to a local bucket by
//! its own refill.

use crate::clock::MonotonicClock;
use crate::fleet_size::FleetSize;
use crate::{
    Assessment, Assessments, BucketKey, BucketSpec, MemorySlots, MemoryStore, Slot, Take, Terms,
};
use smallvec::SmallVec;
use std::sync::Arc;

/// The local buckets of the `on_error = "local"` fallback.
pub struct LocalShare {
    buckets: MemoryStore,
    slots: MemorySlots,
    fleet: Arc<FleetSize>,
    clock: MonotonicClock,
}

impl LocalShare {
    /// Local buckets (at most about `max_entries`) sized by `fleet`.
    pub fn new(max_entries: usize, fleet: Arc<FleetSize>) -> Self {
        Self {
            buckets: MemoryStore::new(max_entries),
            slots: MemorySlots::new(),
            fleet,
            clock: MonotonicClock::new(),
        }
    }

    /// The all-or-nothing take from this instance's share of each bucket, now.
    pub fn acquire(&self, takes: &[Take<'_>]) -> Assessments {
        self.acquire_at(takes, self.clock.now_us())
    }

    /// The all-or-nothing take from this instance's share of each bucket at `now_us`.
    pub fn acquire_at(&self, takes: &[Take<'_>], now_us: u64) -> Assessments {
        let shares = self.shares(takes);
        self.buckets.acquire_at(&shares, now_us)
    }

    /// One of this instance's share of `limit` slots of `key` (at least one), or `None`.
    pub fn acquire_slot(&self, key: BucketKey<'_>, limit: u32) -> Option<Slot> {
        let share = (limit / self.fleet.get().max(1)).max(1);
        self.slots.try_acquire(key, share)
    }

    /// Remembers what the store answered for `takes`: each bucket's share of what was left,
    /// where that is below what the bucket holds now.
    pub fn mirror(&self, takes: &[Take<'_>], answers: &[Assessment]) {
        self.mirror_at(takes, answers, self.clock.now_us());
    }

    /// [`Self::mirror`] at `now_us`.
    pub fn mirror_at(&self, takes: &[Take<'_>], answers: &[Assessment], now_us: u64) {
        let n = f64::from(self.fleet.get());
        for (share, answer) in self.shares(takes).iter().zip(answers) {
            self.buckets.lower_at(share, answer.remaining() / n, now_us);
        }
    }

    fn shares<'a>(&self, takes: &[Take<'a>]) -> SmallVec<[Take<'a>; 4]> {
        let n = f64::from(self.fleet.get());
        takes
            .iter()
            .map(|t| Take {
                spec: share(t.spec, t.cost, n),
                // Prepayment runs at this instance's share of the rate too.
                terms: Terms {
                    overdraft: t.terms.overdraft / n,
                    ..t.terms
                },
                ..*t
            })
            .collect()
    }
}

/// One instance's share of `spec` among `n`: capacity ÷ n (at least `cost`, so a request can
/// still pass) refilled at rate ÷ n (a quota: in the same periods). A share the arithmetic
/// cannot hold exactly is the whole.
fn share(spec: BucketSpec, cost: f64, n: f64) -> BucketSpec {
    let capacity = (spec.capacity() / n).max(cost).min(spec.capacity());
    let shared = match spec.periods() {
        Some(periods) => BucketSpec::quota(capacity, periods),
        None => BucketSpec::new(capacity, spec.rate_per_second() / n),
    };
    shared.unwrap_or(spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::Identity;
    use crate::{Mode, PolicyKey};

    #[test]
    fn a_share_is_a_part_of_the_bucket_but_never_below_one_request() {
        let spec = BucketSpec::new(20.0, 50.0).unwrap();
        let third = share(spec, 1.0, 3.0);
        assert!((third.capacity() - 20.0 / 3.0).abs() < 1e-9);
        assert!((third.rate_per_second() - 50.0 / 3.0).abs() < 1e-9);
        let tiny = share(BucketSpec::new(1.0, 1.0 / 60.0).unwrap(), 1.0, 3.0);
        assert_eq!(tiny.capacity(), 1.0, "one request can still pass");
    }

    fn alice() -> Take<'static> {
        static POLICY: std::sync::LazyLock<PolicyKey> =
            std::sync::LazyLock::new(|| PolicyKey::new("p"));
        let key = crate::IdentityKey::from_bytes([0; 32]);
        Take {
            key: BucketKey {
                policy: &POLICY,
                identity: Identity::of(&key, "t", b"alice"),
            },
            // Shared by one instance: the share is the whole bucket, 10 tokens at 10/s.
            spec: BucketSpec::new(10.0, 10.0).unwrap(),
            cost: 1.0,
            mode: Mode::Enforce,
            terms: Terms::default(),
        }
    }

    fn told(remaining: f64) -> Assessment {
        Assessment::allowed(remaining, 0, 0)
    }

    impl LocalShare {
        /// The tokens `share`'s local bucket holds at `now_us` (full when unknown): a
        /// settlement of nothing reads it and changes nothing.
        fn level_at(&self, share: &Take<'_>, now_us: u64) -> f64 {
            let read = Take {
                cost: 0.0,
                mode: Mode::Settle,
                ..*share
            };
            let answer = self.buckets.acquire_at(std::slice::from_ref(&read), now_us);
            answer
                .first()
                .map_or(share.spec.capacity(), |a| a.remaining())
        }
    }

    fn one_instance() -> LocalShare {
        let gauge = prometheus::IntGauge::new("g", "g").unwrap();
        LocalShare::new(100, Arc::new(FleetSize::new(Some(1), gauge)))
    }

    #[test]
    fn a_stale_answer_never_gives_back_what_was_spent_locally_since() {
        let local = one_instance();
        let takes = [alice()];
        local.mirror_at(&takes, &[told(5.0)], 0);
        for _ in 0..4 {
            assert!(local.acquire_at(&takes, 0)[0].is_allowed());
        }
        // The store said 5 before these four local decisions: 1 is left, not 5.
        local.mirror_at(&takes, &[told(5.0)], 0);
        let next = local.acquire_at(&takes, 0);
        assert!(
            next[0].is_allowed() && next[0].remaining() == 0.0,
            "{next:?}"
        );
        assert!(!local.acquire_at(&takes, 0)[0].is_allowed());
    }

    #[test]
    fn the_mirror_lowers_a_local_bucket_refilled_to_now_and_sets_an_unknown_one() {
        let local = one_instance();
        let takes = [alice()];
        local.mirror_at(&takes, &[told(3.0)], 0);
        assert_eq!(
            local.level_at(&takes[0], 0),
            3.0,
            "unknown: the store's share"
        );
        // 200 ms later the local bucket has refilled to 5: a lower answer lowers it, a higher
        // one (which would raise it) is ignored.
        local.mirror_at(&takes, &[told(8.0)], 200_000);
        assert_eq!(local.level_at(&takes[0], 200_000), 5.0);
        local.mirror_at(&takes, &[told(2.0)], 200_000);
        assert_eq!(local.level_at(&takes[0], 200_000), 2.0);
    }
}
