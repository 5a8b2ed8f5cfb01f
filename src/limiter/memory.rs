//! The embedded store: token buckets in this process's memory, sharded, with bounded size.
//!
//! Buckets live in shards, each behind its own short-held lock; a request locks the shards
//! its buckets fall in, in ascending order (so two requests never deadlock), decides, and
//! unlocks. A bucket that has refilled to full carries no information (an unknown bucket is
//! full), so full buckets are swept away; when a shard still reaches its share of the
//! configured cap, the sampled bucket nearest to full is evicted, losing the least.

use super::bucket::{BucketState, Penalty};
use super::{paying, Assessments, Limiter, LimiterError, Mode, Take};
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

/// A bucket as this store holds it: the policy's number and the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot {
    policy_id: u64,
    identity: Identity,
}

impl Slot {
    fn of(take: &Take<'_>) -> Self {
        Self {
            policy_id: take.key.policy.id(),
            identity: take.key.identity,
        }
    }

    /// The same hash as [`super::BucketKey::hash64`].
    fn hash64(&self) -> u64 {
        self.identity.prefix_u64() ^ self.policy_id
    }
}

impl Hash for Slot {
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
    /// When the bucket will be full again and unblocked, on the store's clock.
    full_at_us: u64,
}

#[derive(Default)]
struct Shard {
    buckets: HashMap<Slot, Entry, BuildHasherDefault<PrehashedHasher>>,
    next_sweep_us: u64,
}

impl Shard {
    fn store(&mut self, key: Slot, entry: Entry, now_us: u64, cap: usize) {
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
        let slots: SmallVec<[Slot; 4]> = takes.iter().map(Slot::of).collect();
        let count = self.shards.len();
        let shard_of = |k: &Slot| Self::shard_index(k, count);
        let mut order: SmallVec<[usize; 4]> = slots.iter().map(shard_of).collect();
        order.sort_unstable();
        order.dedup();
        let mut guards: SmallVec<[MutexGuard<'_, Shard>; 4]> =
            order.iter().map(|&i| self.shards[i].lock()).collect();
        let guard_of = |k: &Slot| order.binary_search(&shard_of(k)).unwrap_or(0);

        let levels: SmallVec<[BucketState; 4]> = takes
            .iter()
            .zip(&slots)
            .map(|(t, k)| {
                let stored = guards[guard_of(k)].buckets.get(k).map(|e| e.state);
                t.spec.refill(stored, now_us)
            })
            .collect();
        let assessments: Assessments = takes
            .iter()
            .zip(&levels)
            .map(|(t, level)| match t.mode {
                Mode::Settle => t.spec.settle(*level, t.cost),
                Mode::Enforce | Mode::Shadow => t.spec.assess(*level, t.cost, t.terms, now_us),
            })
            .collect();
        let paid = paying(takes, &assessments).map(|i| {
            let (t, level) = (&takes[i], levels[i]);
            let state = match t.mode {
                Mode::Settle => t.spec.after_settle(level, t.cost),
                Mode::Enforce | Mode::Shadow => t.spec.after_take(level, &assessments[i]),
            };
            (i, state)
        });
        // A refusal that starts a penalty is written too: the block must outlive the request.
        let blocked = assessments
            .iter()
            .enumerate()
            .filter(|(_, a)| a.penalty == Penalty::Started)
            .map(|(i, _)| {
                (
                    i,
                    takes[i]
                        .spec
                        .after_refusal(levels[i], takes[i].terms, now_us),
                )
            });
        let writes: SmallVec<[(usize, BucketState); 4]> = paid.chain(blocked).collect();
        for (i, state) in writes {
            let k = slots[i];
            let entry = Entry {
                state,
                full_at_us: now_us.saturating_add(takes[i].spec.keep_for_us(&state, now_us)),
            };
            guards[guard_of(&k)].store(k, entry, now_us, self.per_shard_cap);
        }
        assessments
    }
}

impl MemoryStore {
    fn shard_index(slot: &Slot, count: usize) -> usize {
        (slot.hash64() >> 40) as usize % count
    }

    /// Sets the bucket of `take` to hold `tokens` (capped at its capacity) at `now_us`.
    pub fn set_at(&self, take: &Take<'_>, tokens: f64, now_us: u64) {
        let slot = Slot::of(take);
        let tokens = tokens.clamp(0.0, take.spec.capacity());
        let shard = Self::shard_index(&slot, self.shards.len());
        let mut guard = self.shards[shard].lock();
        let full_in = take.spec.micros_to_gain(take.spec.capacity() - tokens);
        if full_in == 0 {
            guard.buckets.remove(&slot);
            return;
        }
        let entry = Entry {
            state: BucketState {
                tokens,
                updated_us: now_us,
                blocked_until_us: 0,
            },
            full_at_us: now_us.saturating_add(full_in),
        };
        guard.store(slot, entry, now_us, self.per_shard_cap);
    }

    /// Sets the bucket of `take` to hold `tokens` now.
    pub fn set_now(&self, take: &Take<'_>, tokens: f64) {
        self.set_at(take, tokens, self.clock.now_us());
    }

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
    use crate::limiter::{BucketKey, BucketSpec, Mode, PolicyKey, Terms};
    use std::sync::LazyLock;

    const SECOND: u64 = 1_000_000;

    static POLICIES: LazyLock<[PolicyKey; 3]> =
        LazyLock::new(|| ["p0", "p1", "p2"].map(PolicyKey::new));

    fn take(policy: usize, who: &str, capacity: f64, rate: f64) -> Take<'static> {
        Take {
            key: BucketKey {
                policy: &POLICIES[policy],
                identity: Identity::of("test", who.as_bytes()),
            },
            spec: BucketSpec::new(capacity, rate).unwrap(),
            cost: 1.0,
            mode: Mode::Enforce,
            terms: Terms::default(),
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
    fn a_shadow_bucket_pays_on_its_own_and_never_blocks() {
        let store = MemoryStore::new(100);
        let enforcing = take(1, "alice", 2.0, 1.0);
        let shadow = Take {
            mode: Mode::Shadow,
            ..take(2, "alice", 1.0, 1.0)
        };
        let first = store.acquire_at(&[enforcing, shadow], 0);
        assert!(first[0].allowed && first[1].allowed);
        let second = store.acquire_at(&[enforcing, shadow], 0);
        assert!(
            second[0].allowed && !second[1].allowed,
            "the shadow bucket is dry"
        );
        // The enforcing bucket paid both times although the shadow bucket ran dry.
        assert!(!store.acquire_at(&[enforcing], 0)[0].allowed);
    }

    #[test]
    fn a_bucket_can_be_set_to_what_another_store_said() {
        let store = MemoryStore::new(100);
        let t = take(1, "alice", 5.0, 1.0);
        store.set_at(&t, 0.5, 0);
        assert!(!store.acquire_at(&[t], 0)[0].allowed);
        assert!(
            store.acquire_at(&[t], SECOND / 2)[0].allowed,
            "0.5 + 0.5 refilled"
        );
        store.set_at(&t, 99.0, SECOND);
        assert_eq!(store.len(), 0, "a full bucket is no bucket");
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
