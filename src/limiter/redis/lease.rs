//! Leases for hot callers: a caller whose requests on this instance Redis allows in quick
//! succession takes a small lease of tokens from its Redis bucket, in the same round as its own
//! decision, and spends it here without a call. Leased tokens leave the Redis bucket first, so
//! the fleet never admits more than the exact bucket; what a lease does not spend goes back to
//! Redis when it expires. Time is passed in.
//!
//! Size: the caller's allowed requests over the last lease period (what it is likely to use in
//! the next), at least two requests' cost, and at most capacity ÷ (20 × fleet size), so the
//! tokens held out of reach in leases stay under 5 % of the bucket at any time. A lease is kept
//! only while the Redis bucket cannot refill to capacity before it lapses (else refill the
//! exact bucket would have kept would be lost and the fleet could pass it); otherwise it is
//! given straight back. Only requests
//! that take from one enforcing bucket use leases; the others go to Redis as before (and see
//! the leased tokens as taken: never more than exact).

use crate::identity::Identity;
use crate::limiter::{Assessment, BucketSpec, Penalty, PolicyKey};
use parking_lot::Mutex;
use std::collections::HashMap;

const SHARDS: usize = 16;
/// The most leases (and heat counters) one shard keeps.
const SHARD_CAP: usize = 4096;
/// A lease is cut at this share of the bucket, divided by the fleet size.
const MAX_SHARE: f64 = 1.0 / 20.0;

/// One caller's bucket under one policy.
pub(super) type LeaseKey = (u64, Identity);

#[derive(Debug, Clone, Default)]
struct Entry {
    /// The policy and bucket shape of the live lease (to refund it).
    granted: Option<(PolicyKey, BucketSpec)>,
    /// A lease was asked for and has not been answered yet.
    pending: bool,
    /// Leased tokens not yet spent.
    tokens: f64,
    /// What Redis said the bucket held after the lease was taken (for honest headers).
    redis_remaining: f64,
    /// When the lease lapses.
    expires_us: u64,
    /// Requests Redis allowed in the current period, and when the period began.
    allowed: u32,
    period_start_us: u64,
}

/// Unspent tokens of a lapsed lease, to be given back to Redis.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Refund {
    /// The policy of the bucket.
    pub(super) policy: PolicyKey,
    /// The caller.
    pub(super) identity: Identity,
    /// The bucket's shape.
    pub(super) spec: BucketSpec,
    /// Tokens to give back.
    pub(super) tokens: f64,
}

impl Refund {
    /// Giving back `tokens` of `policy`'s bucket `spec` of `identity`.
    pub(super) fn of(
        policy: &PolicyKey,
        identity: Identity,
        spec: BucketSpec,
        tokens: f64,
    ) -> Self {
        Self {
            policy: policy.clone(),
            identity,
            spec,
            tokens,
        }
    }
}

/// This instance's leases.
pub(super) struct Leases {
    shards: Box<[Mutex<HashMap<LeaseKey, Entry>>]>,
    period_us: u64,
}

impl Leases {
    /// Leases that last `period_us` (0 turns leasing off).
    pub(super) fn new(period_us: u64) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            period_us,
        }
    }

    fn shard(&self, key: &LeaseKey) -> &Mutex<HashMap<LeaseKey, Entry>> {
        &self.shards[(key.1.prefix_u64() >> 52) as usize % SHARDS]
    }

    /// Spends `cost` from the caller's live lease at `now_us`, if it holds enough: the
    /// request's answer, as the caller's bucket stands with the lease counted in.
    pub(super) fn spend(
        &self,
        key: LeaseKey,
        spec: BucketSpec,
        cost: f64,
        now_us: u64,
    ) -> Option<Assessment> {
        if self.period_us == 0 {
            return None;
        }
        let mut shard = self.shard(&key).lock();
        let entry = shard.get_mut(&key)?;
        if now_us >= entry.expires_us || entry.tokens < cost {
            return None;
        }
        entry.tokens -= cost;
        let remaining = (entry.tokens + entry.redis_remaining).min(spec.capacity());
        Some(Assessment {
            allowed: true,
            remaining,
            retry_after_us: 0,
            full_in_us: spec.micros_to_gain(spec.capacity() - remaining),
            penalty: Penalty::None,
        })
    }

    /// Notes that Redis allowed a request of the caller at `now_us`; returns the size of the
    /// lease to ask for alongside its next decision, if the caller is hot enough to get one.
    pub(super) fn heat(
        &self,
        key: LeaseKey,
        spec: BucketSpec,
        cost: f64,
        fleet: u32,
        now_us: u64,
    ) -> Option<f64> {
        if self.period_us == 0 {
            return None;
        }
        let mut shard = self.shard(&key).lock();
        if shard.len() >= SHARD_CAP && !shard.contains_key(&key) {
            let now = now_us;
            shard.retain(|_, e| e.expires_us > now || e.period_start_us + self.period_us > now);
            if shard.len() >= SHARD_CAP {
                return None;
            }
        }
        let entry = shard.entry(key).or_default();
        if now_us.saturating_sub(entry.period_start_us) >= self.period_us {
            entry.period_start_us = now_us;
            entry.allowed = 0;
        }
        entry.allowed += 1;
        if entry.pending || (now_us < entry.expires_us && entry.tokens >= cost) {
            return None;
        }
        let demand = f64::from(entry.allowed) * cost;
        let cap = spec.capacity() * MAX_SHARE / f64::from(fleet.max(1));
        let size = demand.min(cap).floor();
        entry.pending = size >= 2.0 * cost;
        entry.pending.then_some(size)
    }

    /// The lease asked for was not granted.
    pub(super) fn abandon(&self, key: LeaseKey) {
        if let Some(entry) = self.shard(&key).lock().get_mut(&key) {
            entry.pending = false;
        }
    }

    /// Installs a lease of `tokens` of `policy`'s bucket `spec` granted at `now_us`; Redis
    /// then held `redis_remaining`. Returns what an earlier lease of the same caller left
    /// unspent, to refund.
    pub(super) fn grant(
        &self,
        policy: &PolicyKey,
        identity: Identity,
        spec: BucketSpec,
        tokens: f64,
        redis_remaining: f64,
        now_us: u64,
    ) -> Option<Refund> {
        let key = (policy.id(), identity);
        let mut shard = self.shard(&key).lock();
        let entry = shard.entry(key).or_default();
        let left = Self::take_unspent(entry, identity);
        entry.granted = Some((policy.clone(), spec));
        entry.pending = false;
        entry.tokens = tokens;
        entry.redis_remaining = redis_remaining;
        entry.expires_us = now_us.saturating_add(self.period_us);
        left
    }

    /// The unspent tokens of `entry`'s lease, taken out of it.
    fn take_unspent(entry: &mut Entry, identity: Identity) -> Option<Refund> {
        let (policy, spec) = entry.granted.clone()?;
        let tokens = std::mem::take(&mut entry.tokens);
        (tokens > 0.0).then_some(Refund {
            policy,
            identity,
            spec,
            tokens,
        })
    }

    /// Takes every lease that lapsed by `now_us` and left tokens unspent.
    pub(super) fn lapsed(&self, now_us: u64) -> Vec<Refund> {
        let mut refunds = Vec::new();
        for shard in self.shards.iter() {
            for (key, entry) in shard.lock().iter_mut() {
                if now_us >= entry.expires_us {
                    refunds.extend(Self::take_unspent(entry, key.1));
                }
            }
        }
        refunds
    }

    /// The lease period, in microseconds (0: leasing is off).
    pub(super) fn period_us(&self) -> u64 {
        self.period_us
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::IdentityKey;

    const MS: u64 = 1000;

    fn policy() -> PolicyKey {
        PolicyKey::new("p")
    }

    fn hot() -> Identity {
        Identity::of(&IdentityKey::from_bytes([0; 32]), "t", b"hot")
    }

    fn key() -> LeaseKey {
        (policy().id(), hot())
    }

    #[test]
    fn a_caller_earns_a_lease_by_being_allowed_often_and_spends_it_locally() {
        let leases = Leases::new(100 * MS);
        let spec = BucketSpec::new(1e6, 1e4).unwrap();
        assert_eq!(
            leases.heat(key(), spec, 1.0, 1, 0),
            None,
            "one request is not hot"
        );
        assert_eq!(
            leases.heat(key(), spec, 1.0, 1, MS),
            Some(2.0),
            "two ask for two"
        );
        assert_eq!(
            leases.heat(key(), spec, 1.0, 1, 2 * MS),
            None,
            "one ask at a time"
        );
        leases.abandon(key());
        let mut size = None;
        for i in 3..10 {
            size = size.or(leases.heat(key(), spec, 1.0, 1, i * MS));
        }
        assert_eq!(
            size,
            Some(4.0),
            "four requests in the period ask for four tokens"
        );
        assert_eq!(
            leases.grant(&policy(), hot(), spec, 10.0, 500.0, 10 * MS),
            None
        );
        for _ in 0..10 {
            let a = leases.spend(key(), spec, 1.0, 20 * MS).unwrap();
            assert!(a.allowed && a.remaining >= 500.0);
        }
        assert!(leases.spend(key(), spec, 1.0, 20 * MS).is_none(), "spent");
    }

    #[test]
    fn a_lease_is_capped_by_the_bucket_and_the_fleet() {
        let leases = Leases::new(100 * MS);
        let spec = BucketSpec::new(300.0, 1e4).unwrap();
        let sizes: Vec<f64> = (0..100)
            .filter_map(|i| leases.heat(key(), spec, 1.0, 3, i * 100))
            .collect();
        assert_eq!(sizes, vec![2.0], "one ask, then it waits for its answer");
        leases.abandon(key());
        assert_eq!(
            leases.heat(key(), spec, 1.0, 3, 100 * 100),
            Some(5.0),
            "300 × 5 % ÷ 3"
        );
        let small = BucketSpec::new(20.0, 50.0).unwrap();
        let other = (
            8,
            Identity::of(&IdentityKey::from_bytes([0; 32]), "t", b"flood"),
        );
        assert!((0..100).all(|i| leases.heat(other, small, 1.0, 3, i * 100).is_none()));
    }

    #[test]
    fn unspent_tokens_of_a_lapsed_lease_are_refunded() {
        let leases = Leases::new(100 * MS);
        let spec = BucketSpec::new(1e6, 1e4).unwrap();
        leases.grant(&policy(), hot(), spec, 10.0, 0.0, 0);
        leases.spend(key(), spec, 3.0, 50 * MS).unwrap();
        assert!(leases.lapsed(99 * MS).is_empty(), "still live");
        assert!(leases.spend(key(), spec, 1.0, 100 * MS).is_none(), "lapsed");
        let refunds = leases.lapsed(100 * MS);
        assert_eq!(refunds.len(), 1);
        assert_eq!((refunds[0].identity, refunds[0].tokens), (hot(), 7.0));
        assert!(leases.lapsed(200 * MS).is_empty(), "refunded once");
    }
}
