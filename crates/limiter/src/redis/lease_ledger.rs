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
use crate::{Assessment, BucketId, BucketMap, BucketSpec, PolicyKey};
use parking_lot::Mutex;

mod entry;
#[cfg(test)]
mod tests;

use entry::{Entry, Held};

const SHARDS: usize = 16;
/// The most leases (and use counters) one shard keeps.
const SHARD_CAP: usize = 4096;
/// A lease is cut at this share of the bucket, divided by the fleet size.
const MAX_SHARE: f64 = 1.0 / 20.0;
/// A lease is renewed when this share of its tokens or of its time is left.
const RENEW_AT: f64 = 0.25;

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
        let full_in_us = spec.micros_to_gain(spec.capacity() - remaining, now_us);
        let answer = Assessment::allowed(remaining, 0, full_in_us);
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
