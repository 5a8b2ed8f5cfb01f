//! This instance's share of the fleet's buckets, decided locally when the shared store cannot.
//!
//! With N instances, a caller's local bucket holds capacity ÷ N (at least one request's cost)
//! and refills at rate ÷ N, so N instances deciding alone admit about one limit together. It
//! does not start full: every answer the store gives about a caller (on time or late) is
//! mirrored here as that caller's share of what the store said was left. A caller the store
//! never answered about starts with a full share. Concurrency slots (`max_in_flight`) are
//! shared the same way: this instance holds at most its share of a caller's slots.

use super::fleet::FleetSize;
use super::{
    Assessment, Assessments, BucketKey, BucketSpec, MemorySlots, MemoryStore, Slot, Take, Terms,
};
use smallvec::SmallVec;
use std::sync::Arc;

/// The local buckets of the `on_error = "local"` fallback.
pub struct LocalShare {
    buckets: MemoryStore,
    slots: MemorySlots,
    fleet: Arc<FleetSize>,
}

impl LocalShare {
    /// Local buckets (at most about `max_entries`) sized by `fleet`.
    pub fn new(max_entries: usize, fleet: Arc<FleetSize>) -> Self {
        Self {
            buckets: MemoryStore::new(max_entries),
            slots: MemorySlots::new(),
            fleet,
        }
    }

    /// The all-or-nothing take from this instance's share of each bucket, now.
    pub fn acquire(&self, takes: &[Take<'_>]) -> Assessments {
        let shares = self.shares(takes);
        self.buckets.acquire_now(&shares)
    }

    /// One of this instance's share of `limit` slots of `key` (at least one), or `None`.
    pub fn acquire_slot(&self, key: BucketKey<'_>, limit: u32) -> Option<Slot> {
        let share = (limit / self.fleet.get().max(1)).max(1);
        self.slots.try_acquire(key, share)
    }

    /// Remembers what the store answered for `takes`: each bucket's share of what was left.
    pub fn mirror(&self, takes: &[Take<'_>], answers: &[Assessment]) {
        let n = f64::from(self.fleet.get());
        for (share, answer) in self.shares(takes).iter().zip(answers) {
            self.buckets.set_now(share, answer.remaining / n);
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
/// still pass) refilled at rate ÷ n. A share the arithmetic cannot hold exactly is the whole.
fn share(spec: BucketSpec, cost: f64, n: f64) -> BucketSpec {
    let capacity = (spec.capacity() / n).max(cost).min(spec.capacity());
    BucketSpec::new(capacity, spec.rate_per_second() / n).unwrap_or(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_is_a_part_of_the_bucket_but_never_below_one_request() {
        let spec = BucketSpec::new(20.0, 50.0).unwrap();
        let third = share(spec, 1.0, 3.0);
        assert!((third.capacity() - 20.0 / 3.0).abs() < 1e-9);
        assert!((third.rate_per_second() - 50.0 / 3.0).abs() < 1e-9);
        let tiny = share(BucketSpec::new(1.0, 1.0 / 60.0).unwrap(), 1.0, 3.0);
        assert_eq!(tiny.capacity(), 1.0, "one request can still pass");
    }
}
