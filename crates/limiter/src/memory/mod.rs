//! The embedded store: token buckets in this process's memory, sharded, with bounded size.
//!
//! Buckets live in shards, each behind its own short-held lock; all buckets of one caller share
//! a shard, so a request usually locks one (several callers' shards are locked in ascending
//! order, so two requests never deadlock), decides, and unlocks. A bucket that has refilled to
//! full carries no information (an unknown bucket is full), so full buckets are swept away.
//!
//! When a shard reaches its share of `max_entries`, a caller is evicted, all its buckets at
//! once, by two rules:
//! - **Eviction never frees a debtor.** A caller *owes* while any of its buckets holds less than
//!   its policy's cost (it would be, or just was, refused). A caller that owes is never chosen
//!   while one that owes nothing is found; flooding the store with new callers therefore cannot
//!   hand a throttled caller a fresh bucket. Only when the buckets looked at all owe does the
//!   shard grow past its share, up to twice it; there the debt paid off soonest is forgiven.
//!   Building that many debts takes an attacker a whole bucket of requests per identity.
//! - **The least is lost.** Among the first callers that owe nothing (up to 8, looked for in
//!   up to 64 buckets), the one whose buckets are all full soonest, across all its policies,
//!   is evicted: evicting it hands back the fewest tokens.

use super::bucket::{BucketState, Penalty};
use super::{
    paying, Assessment, Assessments, BucketId, BucketKey, BucketSpec, Limiter, LimiterError, Mode,
    Peek, Take,
};
use crate::clock::MonotonicClock;
use async_trait::async_trait;
use parking_lot::{Mutex, MutexGuard};
use shard::{Entry, Shard};
use smallvec::SmallVec;

mod inspect;
mod shard;

/// The fewest shards the buckets are spread over.
const MIN_SHARDS: usize = 16;
/// The most buckets one shard holds: 7/8 of 2^14, the load at which a hash table of 2^14 slots
/// would double. Capping shards here keeps every table at most 2^14 slots, nearly full,
/// instead of doubling to twice the memory just past a power of two.
const SHARD_CAP: usize = (1 << 14) / 8 * 7;

/// In-process token buckets shared by every worker thread.
pub struct MemoryStore {
    shards: Box<[Mutex<Shard>]>,
    per_shard_cap: usize,
    clock: MonotonicClock,
}

impl MemoryStore {
    /// A store that holds about `max_entries` buckets (rounded up to a whole share per shard),
    /// at most twice that when only callers in debt are left to evict.
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
        self.shards.iter().map(|s| s.lock().len()).sum()
    }

    /// Whether no bucket is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The all-or-nothing take at an explicit instant on the store's clock.
    pub fn acquire_at(&self, takes: &[Take<'_>], now_us: u64) -> Assessments {
        match takes {
            [take] => smallvec::smallvec![self.acquire_one(take, now_us)],
            _ => self.acquire_many(takes, now_us),
        }
    }

    /// One take (most requests' only one): one shard, no ordering, nothing collected.
    fn acquire_one(&self, take: &Take<'_>, now_us: u64) -> Assessment {
        let id = take.key.id();
        let mut shard = self.shards[shard_index(&id, self.shards.len())].lock();
        let level = take.spec.refill(shard.get(&id), now_us);
        let answer = assess(take, level, now_us);
        let write = match answer.is_allowed() {
            true => Some(paid(take, level, &answer, now_us)),
            false => blocked(take, level, &answer, now_us),
        };
        if let Some((state, owed)) = write {
            shard.store(
                id,
                entry(take, state, owed, now_us),
                now_us,
                self.per_shard_cap,
            );
        }
        if !answer.is_allowed() {
            shard.owe(&id, now_us.saturating_add(answer.wait_us()));
        }
        answer
    }

    /// Several takes, all or nothing: their shards locked in ascending order.
    fn acquire_many(&self, takes: &[Take<'_>], now_us: u64) -> Assessments {
        let ids: SmallVec<[BucketId; 4]> = takes.iter().map(|t| t.key.id()).collect();
        let count = self.shards.len();
        let shard_of = |k: &BucketId| shard_index(k, count);
        let mut order: SmallVec<[usize; 4]> = ids.iter().map(shard_of).collect();
        order.sort_unstable();
        order.dedup();
        let mut guards: SmallVec<[MutexGuard<'_, Shard>; 4]> =
            order.iter().map(|&i| self.shards[i].lock()).collect();
        let guard_of = |k: &BucketId| order.binary_search(&shard_of(k)).unwrap_or(0);

        let levels: SmallVec<[BucketState; 4]> = takes
            .iter()
            .zip(&ids)
            .map(|(t, k)| t.spec.refill(guards[guard_of(k)].get(k), now_us))
            .collect();
        let assessments: Assessments = takes
            .iter()
            .zip(&levels)
            .map(|(t, level)| assess(t, *level, now_us))
            .collect();
        let paid = paying(takes, &assessments).map(|i| {
            let (state, owed) = paid(&takes[i], levels[i], &assessments[i], now_us);
            (i, state, owed)
        });
        let blocked = (0..takes.len()).filter_map(|i| {
            let (state, owed) = blocked(&takes[i], levels[i], &assessments[i], now_us)?;
            Some((i, state, owed))
        });
        let writes: SmallVec<[(usize, BucketState, f64); 4]> = paid.chain(blocked).collect();
        for (i, state, owed) in writes {
            let (t, k) = (&takes[i], ids[i]);
            let entry = entry(t, state, owed, now_us);
            guards[guard_of(&k)].store(k, entry, now_us, self.per_shard_cap);
        }
        for (k, a) in ids
            .iter()
            .zip(&assessments)
            .filter(|(_, a)| !a.is_allowed())
        {
            guards[guard_of(k)].owe(k, now_us.saturating_add(a.wait_us()));
        }
        assessments
    }
}

/// The answer to `take` from its bucket at `level`. The memory store is one instance's whole
/// bucket and keeps no leases: a lease asked of it is a plain take, and its return a refund of
/// what was left unspent.
fn assess(take: &Take<'_>, level: BucketState, now_us: u64) -> Assessment {
    match take.mode {
        Mode::Settle | Mode::Return { .. } => take.spec.settle(level, take.cost, now_us),
        Mode::Enforce | Mode::Shadow | Mode::Lease => {
            take.spec.assess(level, take.cost, take.terms, now_us)
        }
    }
}

/// The bucket `take` leaves once it is paid, and what its caller still owes. A settlement's
/// cost is a change, not a request's cost: it owes while in debt.
fn paid(
    take: &Take<'_>,
    level: BucketState,
    answer: &Assessment,
    now_us: u64,
) -> (BucketState, f64) {
    match take.mode {
        Mode::Settle | Mode::Return { .. } => (
            take.spec.after_settle(level, take.cost, now_us),
            -answer.remaining(),
        ),
        Mode::Enforce | Mode::Shadow | Mode::Lease => (
            take.spec.after_take(level, answer),
            take.cost - answer.remaining(),
        ),
    }
}

/// The bucket a refusal that starts a penalty leaves (the block must outlive the request).
fn blocked(
    take: &Take<'_>,
    level: BucketState,
    answer: &Assessment,
    now_us: u64,
) -> Option<(BucketState, f64)> {
    (answer.penalty() == Penalty::Started).then(|| {
        (
            take.spec.after_refusal(level, take.terms, now_us),
            take.cost,
        )
    })
}

/// The stored entry of `take`'s bucket at `state`, its caller owing `owed` tokens.
fn entry(take: &Take<'_>, state: BucketState, owed: f64, now_us: u64) -> Entry {
    Entry {
        state,
        full_at_us: now_us.saturating_add(take.spec.keep_for_us(&state, now_us)),
        pay_at_us: now_us.saturating_add(take.spec.micros_to_gain(owed, now_us)),
    }
}

/// The shard of `id` among `count`: by caller only, so one caller's buckets share a shard,
/// where eviction can see them all.
fn shard_index(id: &BucketId, count: usize) -> usize {
    (id.identity.prefix_u64() >> 40) as usize % count
}

impl MemoryStore {
    /// Sets the bucket of `take` to hold `tokens` (capped at its capacity) at `now_us`.
    pub fn set_at(&self, take: &Take<'_>, tokens: f64, now_us: u64) {
        let id = take.key.id();
        let mut shard = self.shards[shard_index(&id, self.shards.len())].lock();
        let state = BucketState {
            tokens: tokens.clamp(0.0, take.spec.capacity()),
            updated_us: now_us,
            blocked_until_us: 0,
        };
        self.write(&mut shard, id, take, state, now_us);
    }

    /// Lowers the bucket of `take` to `tokens` at `now_us` if it holds more (refilled to then;
    /// an unknown bucket is full), under the lock its takes use, so no take slips in between
    /// the reading and the writing. A standing block stays.
    pub fn lower_at(&self, take: &Take<'_>, tokens: f64, now_us: u64) {
        let id = take.key.id();
        let mut shard = self.shards[shard_index(&id, self.shards.len())].lock();
        let level = take.spec.refill(shard.get(&id), now_us);
        if tokens >= level.tokens {
            return;
        }
        let state = BucketState {
            tokens: tokens.max(0.0),
            updated_us: now_us,
            ..level
        };
        self.write(&mut shard, id, take, state, now_us);
    }

    /// Stores `state` as the bucket of `take` (a full, unblocked bucket is no bucket).
    fn write(
        &self,
        shard: &mut Shard,
        id: BucketId,
        take: &Take<'_>,
        state: BucketState,
        now_us: u64,
    ) {
        let spec = take.spec;
        let full_in = spec.micros_to_gain(spec.capacity() - state.tokens, now_us);
        if full_in == 0 && state.blocked_until_us <= now_us {
            shard.remove(&id);
            return;
        }
        let entry = Entry {
            state,
            full_at_us: now_us.saturating_add(full_in),
            pay_at_us: now_us.saturating_add(spec.micros_to_gain(take.cost - state.tokens, now_us)),
        };
        shard.store(id, entry, now_us, self.per_shard_cap);
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

    fn acquire_at_hand(&self, takes: &[Take<'_>]) -> Option<Result<Assessments, LimiterError>> {
        Some(Ok(self.acquire_now(takes)))
    }

    async fn peek(&self, key: BucketKey<'_>, spec: BucketSpec) -> Result<Peek, LimiterError> {
        Ok(self.peek_now(key, spec))
    }

    async fn reset(&self, keys: &[BucketKey<'_>]) -> Result<(), LimiterError> {
        self.reset_now(keys);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
