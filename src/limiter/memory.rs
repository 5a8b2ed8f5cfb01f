//! The embedded store: token buckets in this process's memory, sharded, with bounded size.
//!
//! Buckets live in shards, each behind its own short-held lock; a request locks the shards
//! its buckets fall in, in ascending order (so two requests never deadlock), decides, and
//! unlocks. A bucket that has refilled to full carries no information (an unknown bucket is
//! full), so full buckets are swept away; when a shard still reaches its share of the
//! configured cap, the sampled bucket nearest to full is evicted, losing the least.

use super::bucket::BucketState;
use super::{Assessments, Limiter, LimiterError, Take};
use crate::clock::MonotonicClock;
use crate::identity::Identity;
use async_trait::async_trait;
use parking_lot::{Mutex, MutexGuard};
use smallvec::SmallVec;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// The fewest shards the buckets are spread over.
const MIN_SHARDS: usize = 16;
/// The most buckets one shard holds: 7/8 of 2^14, the load at which a hash table of 2^14 slots
/// would double. Capping shards here keeps every table at most 2^14 slots, nearly full,
/// instead of doubling to twice the memory just past a power of two.
const SHARD_CAP: usize = (1 << 14) / 8 * 7;
/// How often a shard in use is swept of full buckets.
const SWEEP_INTERVAL_US: u64 = 5_000_000;
/// How many buckets are looked at to choose one to evict when a shard is at its cap.
const EVICTION_SAMPLE: usize = 8;

/// In-process token buckets shared by every worker thread.
pub struct MemoryStore {
    shards: Box<[Mutex<Shard>]>,
    per_shard_cap: usize,
    clock: MonotonicClock,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct BucketKey {
    policy_id: u64,
    identity: Identity,
}

impl BucketKey {
    /// The identity is already a cryptographic digest, so its bits serve as the hash.
    fn hash64(&self) -> u64 {
        self.identity.prefix_u64() ^ self.policy_id
    }
}

impl Hash for BucketKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash64());
    }
}

/// Passes a precomputed 64-bit hash through instead of hashing it again.
#[derive(Default)]
struct PrehashedHasher(u64);

impl Hasher for PrehashedHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    state: BucketState,
    /// When the bucket will be full again, on the store's clock.
    full_at_us: u64,
}

#[derive(Default)]
struct Shard {
    buckets: HashMap<BucketKey, Entry, BuildHasherDefault<PrehashedHasher>>,
    next_sweep_us: u64,
}

impl Shard {
    fn store(&mut self, key: BucketKey, entry: Entry, now_us: u64, cap: usize) {
        if now_us >= self.next_sweep_us {
            self.sweep(now_us);
        }
        if self.buckets.len() >= cap && !self.buckets.contains_key(&key) {
            self.evict_nearest_full();
        }
        self.buckets.insert(key, entry);
    }

    fn sweep(&mut self, now_us: u64) {
        self.buckets.retain(|_, e| e.full_at_us > now_us);
        self.next_sweep_us = now_us.saturating_add(SWEEP_INTERVAL_US);
    }

    fn evict_nearest_full(&mut self) {
        let victim = self
            .buckets
            .iter()
            .take(EVICTION_SAMPLE)
            .min_by_key(|(_, e)| e.full_at_us)
            .map(|(k, _)| *k);
        if let Some(key) = victim {
            self.buckets.remove(&key);
        }
    }
}

impl MemoryStore {
    /// A store that holds at most about `max_entries` buckets (rounded up to a whole share
    /// per shard).
    pub fn new(max_entries: usize) -> Self {
        let count = max_entries.div_ceil(SHARD_CAP).max(MIN_SHARDS);
        let shards = (0..count).map(|_| Mutex::new(Shard::default())).collect();
        Self {
            shards,
            per_shard_cap: max_entries.div_ceil(count).max(1),
            clock: MonotonicClock::new(),
        }
    }

    /// How many buckets are held now (full ones not yet swept included).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().buckets.len()).sum()
    }

    /// Whether no bucket is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The all-or-nothing take at an explicit instant on the store's clock.
    pub fn acquire_at(&self, takes: &[Take<'_>], now_us: u64) -> Assessments {
        let keys: SmallVec<[BucketKey; 4]> = takes
            .iter()
            .map(|t| BucketKey {
                policy_id: t.policy_id,
                identity: t.identity,
            })
            .collect();
        let count = self.shards.len();
        let shard_of = |k: &BucketKey| (k.hash64() >> 40) as usize % count;
        let mut order: SmallVec<[usize; 4]> = keys.iter().map(shard_of).collect();
        order.sort_unstable();
        order.dedup();
        let mut guards: SmallVec<[MutexGuard<'_, Shard>; 4]> =
            order.iter().map(|&i| self.shards[i].lock()).collect();
        let guard_of = |k: &BucketKey| order.binary_search(&shard_of(k)).unwrap_or(0);

        let levels: SmallVec<[BucketState; 4]> = takes
            .iter()
            .zip(&keys)
            .map(|(t, k)| {
                let stored = guards[guard_of(k)].buckets.get(k).map(|e| e.state);
                t.spec.refill(stored, now_us)
            })
            .collect();
        let assessments: Assessments = takes
            .iter()
            .zip(&levels)
            .map(|(t, level)| t.spec.assess(*level, t.cost))
            .collect();

        if assessments.iter().all(|a| a.allowed) {
            for ((t, k), (level, a)) in takes.iter().zip(&keys).zip(levels.iter().zip(&assessments))
            {
                let entry = Entry {
                    state: t.spec.after_take(*level, t.cost),
                    full_at_us: now_us.saturating_add(a.full_in_us),
                };
                guards[guard_of(k)].store(*k, entry, now_us, self.per_shard_cap);
            }
        }
        assessments
    }
}

impl MemoryStore {
    /// The all-or-nothing take now.
    pub fn acquire_now(&self, takes: &[Take<'_>]) -> Assessments {
        self.acquire_at(takes, self.clock.now_us())
    }
}

#[async_trait]
impl Limiter for MemoryStore {
    async fn acquire(&self, takes: &[Take<'_>]) -> Result<Assessments, LimiterError> {
        Ok(self.acquire_now(takes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limiter::BucketSpec;

    const SECOND: u64 = 1_000_000;

    fn take(policy_id: u64, who: &str, capacity: f64, rate: f64) -> Take<'static> {
        Take {
            policy_id,
            policy_name: "p",
            identity: Identity::of("test", who.as_bytes()),
            spec: BucketSpec {
                capacity,
                rate_per_second: rate,
            },
            cost: 1.0,
        }
    }

    #[test]
    fn identities_have_separate_buckets() {
        let store = MemoryStore::new(100);
        let alice = [take(1, "alice", 1.0, 1.0)];
        let bob = [take(1, "bob", 1.0, 1.0)];
        assert!(store.acquire_at(&alice, 0)[0].allowed);
        assert!(!store.acquire_at(&alice, 0)[0].allowed);
        assert!(store.acquire_at(&bob, 0)[0].allowed);
    }

    #[test]
    fn a_request_refused_by_one_policy_takes_from_none() {
        let store = MemoryStore::new(100);
        let wide = take(1, "alice", 10.0, 1.0);
        let narrow = take(2, "alice", 1.0, 1.0);
        assert!(store
            .acquire_at(&[wide, narrow], 0)
            .iter()
            .all(|a| a.allowed));
        let refused = store.acquire_at(&[wide, narrow], 0);
        assert!(refused[0].allowed && !refused[1].allowed);
        // The wide bucket still holds the 9 tokens the refused request did not take.
        assert_eq!(store.acquire_at(&[wide], 0)[0].remaining, 8.0);
    }

    #[test]
    fn full_buckets_are_swept() {
        let store = MemoryStore::new(100_000);
        for who in 0..50 {
            store.acquire_at(&[take(1, &who.to_string(), 2.0, 1.0)], 0);
        }
        assert_eq!(store.len(), 50);
        // Long after those buckets refilled, writes to their shards sweep them away.
        let later = 10 * SWEEP_INTERVAL_US;
        for who in 0..1000 {
            store.acquire_at(&[take(2, &format!("x{who}"), 2.0, 1.0)], later);
        }
        assert_eq!(store.len(), 1000);
    }

    #[test]
    fn the_cap_bounds_the_number_of_buckets() {
        let store = MemoryStore::new(MIN_SHARDS * 4);
        for who in 0..10_000 {
            store.acquire_at(&[take(1, &who.to_string(), 5.0, 0.001)], SECOND);
        }
        assert!(store.len() <= MIN_SHARDS * 4);
    }

    #[test]
    fn shards_never_outgrow_their_cap() {
        let store = MemoryStore::new(1_000_000);
        assert_eq!(store.shards.len(), 70);
        assert!(store.per_shard_cap <= SHARD_CAP);
    }
}
