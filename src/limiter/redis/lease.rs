//! Leases for hot callers: a caller whose requests on this instance pass in quick succession
//! takes a lease of tokens from its Redis bucket and spends it here without a call. Leased
//! tokens leave the Redis bucket first and stay counted against it until the lease comes back
//! (`bucket::leased`: Redis refills the bucket only up to capacity minus what is out), so the
//! fleet never admits more than the exact bucket, however full the bucket was. A lease is
//! renewed before it runs out (when a quarter of its tokens or of its time is left): the old
//! lease goes back with what it left unspent in the same call that asks for the new one, so
//! an instance never holds two leases of one bucket, and only the caller's requests during
//! that one round trip wait for Redis. A lapsed lease goes back within a period. Time is
//! passed in.
//!
//! Size: the caller's requests here over the last lease period (what it is likely to use in
//! the next), at least two requests' cost, and at most capacity ÷ (20 × fleet size), so the
//! tokens held out of reach in leases stay under 5 % of the bucket at any time: that is the
//! most a lease can under-admit. Only requests that take from one enforcing bucket on plain
//! terms use leases; the others go to Redis as before (and see the leased tokens as taken).

use crate::identity::Identity;
use crate::limiter::{Assessment, BucketId, BucketMap, BucketSpec, Penalty, PolicyKey};
use parking_lot::Mutex;

const SHARDS: usize = 16;
/// The most leases (and use counters) one shard keeps.
const SHARD_CAP: usize = 4096;
/// A lease is cut at this share of the bucket, divided by the fleet size.
const MAX_SHARE: f64 = 1.0 / 20.0;
/// A lease is renewed when this share of its tokens or of its time is left.
const RENEW_AT: f64 = 0.25;

/// A lease this instance holds.
#[derive(Debug, Clone)]
struct Held {
    policy: PolicyKey,
    spec: BucketSpec,
    /// Tokens lent.
    size: f64,
    /// The lease window Redis lent them in.
    window: u64,
    /// Lent tokens not yet spent.
    unspent: f64,
    /// What Redis said the bucket held after lending (for honest headers).
    redis_remaining: f64,
    /// When the lease lapses here.
    expires_us: u64,
}

#[derive(Debug, Clone, Default)]
struct Entry {
    held: Option<Held>,
    /// A lease was asked for and has not been answered yet.
    pending: bool,
    /// The caller's requests here in the current period and the one before, and when the
    /// current one began.
    used_now: u32,
    used_before: u32,
    period_start_us: u64,
}

/// A lease going back to Redis: its size, its window and what it left unspent.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Refund {
    /// The policy of the bucket.
    pub(super) policy: PolicyKey,
    /// The caller.
    pub(super) identity: Identity,
    /// The bucket's shape.
    pub(super) spec: BucketSpec,
    /// Tokens lent.
    pub(super) leased: f64,
    /// The lease window they were lent in.
    pub(super) window: u64,
    /// Tokens to put back.
    pub(super) unspent: f64,
}

/// A request answered from a lease, and the size of the lease to renew it with, if it is
/// time to.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Spent {
    pub(super) answer: Assessment,
    pub(super) renew: Option<f64>,
}

/// A lease Redis granted, to install.
pub(super) struct Grant<'a> {
    pub(super) policy: &'a PolicyKey,
    pub(super) identity: Identity,
    pub(super) spec: BucketSpec,
    pub(super) size: f64,
    pub(super) window: u64,
    pub(super) redis_remaining: f64,
    /// When it was asked for on this instance's clock: it lapses a period after.
    pub(super) asked_us: u64,
}

/// This instance's leases.
pub(super) struct Leases {
    shards: Box<[Mutex<BucketMap<Entry>>]>,
    period_us: u64,
}

impl Entry {
    /// Counts one request of the caller at `now_us`.
    fn used(&mut self, now_us: u64, period_us: u64) {
        let since = now_us.saturating_sub(self.period_start_us);
        if since >= period_us {
            self.used_before = if since < 2 * period_us {
                self.used_now
            } else {
                0
            };
            self.used_now = 0;
            self.period_start_us = now_us;
        }
        self.used_now = self.used_now.saturating_add(1);
    }

    /// The size of lease to ask for, if the caller is hot enough for one (and asks now).
    fn ask(&mut self, spec: BucketSpec, cost: f64, fleet: u32) -> Option<f64> {
        let demand = f64::from(self.used_now.max(self.used_before)) * cost;
        let cap = spec.capacity() * MAX_SHARE / f64::from(fleet.max(1));
        let size = demand.min(cap).floor();
        self.pending = size >= 2.0 * cost;
        self.pending.then_some(size)
    }

    /// The held lease, taken out to go back to Redis.
    fn give_back(&mut self, identity: Identity) -> Option<Refund> {
        let held = self.held.take()?;
        Some(Refund {
            policy: held.policy,
            identity,
            spec: held.spec,
            leased: held.size,
            window: held.window,
            unspent: held.unspent,
        })
    }
}

impl Leases {
    /// Leases that last `period_us` (0 turns leasing off).
    pub(super) fn new(period_us: u64) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            period_us,
        }
    }

    fn shard(&self, key: &BucketId) -> &Mutex<BucketMap<Entry>> {
        &self.shards[(key.identity.prefix_u64() >> 52) as usize % SHARDS]
    }

    /// Spends `cost` from the caller's live lease at `now_us`, if it holds enough: the
    /// request's answer, as the caller's bucket stands with the lease counted in, and whether
    /// to renew the lease now.
    pub(super) fn spend(
        &self,
        key: BucketId,
        spec: BucketSpec,
        cost: f64,
        fleet: u32,
        now_us: u64,
    ) -> Option<Spent> {
        if self.period_us == 0 {
            return None;
        }
        let mut shard = self.shard(&key).lock();
        let entry = shard.get_mut(&key)?;
        let held = entry.held.as_mut()?;
        if now_us >= held.expires_us || held.unspent < cost {
            return None;
        }
        held.unspent -= cost;
        let remaining = (held.unspent + held.redis_remaining).min(spec.capacity());
        let running_low = held.unspent < held.size * RENEW_AT
            || held.expires_us - now_us < (self.period_us as f64 * RENEW_AT) as u64;
        entry.used(now_us, self.period_us);
        let renew = match running_low && !entry.pending {
            true => entry.ask(spec, cost, fleet),
            false => None,
        };
        let answer = Assessment {
            allowed: true,
            remaining,
            retry_after_us: 0,
            full_in_us: spec.micros_to_gain(spec.capacity() - remaining),
            penalty: Penalty::None,
        };
        Some(Spent { answer, renew })
    }

    /// Notes that Redis allowed a request of the caller at `now_us`; returns the size of the
    /// lease to ask for, if the caller is hot enough to get one and has none.
    pub(super) fn heat(
        &self,
        key: BucketId,
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
            let period = self.period_us;
            shard.retain(|_, e| e.held.is_some() || e.period_start_us + period > now_us);
            if shard.len() >= SHARD_CAP {
                return None;
            }
        }
        let entry = shard.entry(key).or_default();
        entry.used(now_us, self.period_us);
        let live = entry
            .held
            .as_ref()
            .is_some_and(|h| now_us < h.expires_us && h.unspent >= cost);
        if entry.pending || live {
            return None;
        }
        entry.ask(spec, cost, fleet)
    }

    /// Takes the caller's lease out, to go back to Redis with the ask for its successor:
    /// from now on the caller's requests here go to Redis until the new lease is in.
    pub(super) fn take_out(&self, key: BucketId) -> Option<Refund> {
        self.shard(&key)
            .lock()
            .get_mut(&key)?
            .give_back(key.identity)
    }

    /// The lease asked for was not granted.
    pub(super) fn abandon(&self, key: BucketId) {
        if let Some(entry) = self.shard(&key).lock().get_mut(&key) {
            entry.pending = false;
        }
    }

    /// Installs `grant`; returns the lease it replaces, to go back to Redis (none when the
    /// old one was taken out with the ask, as [`RedisStore`](super::RedisStore) does).
    pub(super) fn grant(&self, grant: Grant<'_>) -> Option<Refund> {
        let key = BucketId {
            policy_id: grant.policy.id(),
            identity: grant.identity,
        };
        let mut shard = self.shard(&key).lock();
        let entry = shard.entry(key).or_default();
        let earlier = entry.give_back(grant.identity);
        entry.pending = false;
        entry.held = Some(Held {
            policy: grant.policy.clone(),
            spec: grant.spec,
            size: grant.size,
            window: grant.window,
            unspent: grant.size,
            redis_remaining: grant.redis_remaining,
            expires_us: grant.asked_us.saturating_add(self.period_us),
        });
        earlier
    }

    /// Takes every lease that lapsed by `now_us`, to go back to Redis.
    pub(super) fn lapsed(&self, now_us: u64) -> Vec<Refund> {
        let mut refunds = Vec::new();
        for shard in self.shards.iter() {
            for (key, entry) in shard.lock().iter_mut() {
                if entry.held.as_ref().is_some_and(|h| now_us >= h.expires_us) {
                    refunds.extend(entry.give_back(key.identity));
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

    fn key() -> BucketId {
        BucketId {
            policy_id: policy().id(),
            identity: hot(),
        }
    }

    fn grant(policy: &PolicyKey, spec: BucketSpec, size: f64, asked_us: u64) -> Grant<'_> {
        Grant {
            policy,
            identity: hot(),
            spec,
            size,
            window: 7,
            redis_remaining: 500.0,
            asked_us,
        }
    }

    #[test]
    fn a_caller_earns_a_lease_by_passing_often_and_spends_it_locally() {
        let leases = Leases::new(100 * MS);
        let spec = BucketSpec::new(1e6, 1e4).unwrap();
        assert_eq!(leases.heat(key(), spec, 1.0, 1, 0), None, "one is not hot");
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
        let size = (3..10).find_map(|i| leases.heat(key(), spec, 1.0, 1, i * MS));
        assert_eq!(
            size,
            Some(4.0),
            "four requests in the period ask for four tokens"
        );
        let p = policy();
        assert_eq!(leases.grant(grant(&p, spec, 12.0, 10 * MS)), None);
        for _ in 0..9 {
            let spent = leases.spend(key(), spec, 1.0, 1, 20 * MS).unwrap();
            assert!(spent.answer.allowed && spent.answer.remaining >= 500.0);
            assert_eq!(spent.renew, None, "more than a quarter left");
        }
        let spent = leases.spend(key(), spec, 1.0, 1, 20 * MS).unwrap();
        assert!(spent.renew.is_some(), "2 of 12 left: renew now");
        assert_eq!(
            leases.spend(key(), spec, 1.0, 1, 20 * MS).unwrap().renew,
            None
        );
        leases.spend(key(), spec, 1.0, 1, 20 * MS).unwrap();
        assert!(
            leases.spend(key(), spec, 1.0, 1, 20 * MS).is_none(),
            "spent"
        );
    }

    #[test]
    fn a_lease_is_renewed_when_a_quarter_of_its_time_is_left_and_the_old_one_goes_back_first() {
        let leases = Leases::new(100 * MS);
        let spec = BucketSpec::new(1e6, 1e4).unwrap();
        let p = policy();
        leases.grant(grant(&p, spec, 100.0, 0));
        assert_eq!(
            leases.spend(key(), spec, 1.0, 1, 70 * MS).unwrap().renew,
            None
        );
        let renew = leases.spend(key(), spec, 1.0, 1, 80 * MS).unwrap().renew;
        assert_eq!(
            renew,
            Some(2.0),
            "20 of 100 ms left: renew, sized by two requests"
        );
        assert_eq!(
            leases.spend(key(), spec, 1.0, 1, 81 * MS).unwrap().renew,
            None,
            "asked"
        );
        let back = leases.take_out(key()).unwrap();
        assert_eq!((back.leased, back.unspent, back.window), (100.0, 97.0, 7));
        assert!(
            leases.spend(key(), spec, 1.0, 1, 82 * MS).is_none(),
            "until the new lease is in, Redis decides"
        );
        assert_eq!(leases.take_out(key()), None, "taken out once");
        assert_eq!(leases.grant(grant(&p, spec, 2.0, 80 * MS)), None);
        assert!(leases.spend(key(), spec, 1.0, 1, 83 * MS).is_some());
    }

    #[test]
    fn a_lease_granted_over_a_held_one_sends_the_held_one_back() {
        let leases = Leases::new(100 * MS);
        let spec = BucketSpec::new(1e6, 1e4).unwrap();
        let p = policy();
        leases.grant(grant(&p, spec, 10.0, 0));
        leases.spend(key(), spec, 1.0, 1, MS).unwrap();
        let back = leases.grant(grant(&p, spec, 5.0, 2 * MS)).unwrap();
        assert_eq!((back.leased, back.unspent), (10.0, 9.0));
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
        let other = BucketId {
            policy_id: 8,
            identity: Identity::of(&IdentityKey::from_bytes([0; 32]), "t", b"flood"),
        };
        assert!((0..100).all(|i| leases.heat(other, small, 1.0, 3, i * 100).is_none()));
    }

    #[test]
    fn a_lapsed_lease_goes_back_once_even_when_fully_spent() {
        let leases = Leases::new(100 * MS);
        let spec = BucketSpec::new(1e6, 1e4).unwrap();
        let p = policy();
        leases.grant(grant(&p, spec, 3.0, 0));
        for _ in 0..3 {
            leases.spend(key(), spec, 1.0, 1, 50 * MS).unwrap();
        }
        assert!(leases.lapsed(99 * MS).is_empty(), "still live");
        let refunds = leases.lapsed(100 * MS);
        assert_eq!(refunds.len(), 1);
        assert_eq!((refunds[0].leased, refunds[0].unspent), (3.0, 0.0));
        assert!(leases.lapsed(200 * MS).is_empty(), "given back once");
    }
}
