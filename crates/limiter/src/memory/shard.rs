//! One shard of the memory store: its buckets, the sweep of full ones, and eviction (the rules
//! are in the module doc of `memory`).

use crate::identity::Identity;
use crate::{BucketId, BucketMap, BucketState};
use smallvec::SmallVec;

/// How often a shard in use is swept of full buckets.
pub(super) const SWEEP_INTERVAL_US: u64 = 5_000_000;
/// How many callers that owe nothing are compared to choose the one to evict.
const EVICTION_SAMPLE: usize = 8;
/// The most buckets looked at to find them.
const SCAN_LIMIT: usize = 64;
/// A shard whose scan finds only callers in debt may grow to this many times its share before
/// a debt is forgiven.
pub(super) const DEBT_GROWTH: usize = 2;

/// A stored bucket and the two instants eviction needs, on the store's clock.
#[derive(Debug, Clone, Copy)]
pub(super) struct Entry {
    pub(super) state: BucketState,
    /// When the bucket will be full again (and so the same as no bucket).
    pub(super) full_at_us: u64,
    /// When the bucket will hold its policy's cost again: until then its caller owes.
    pub(super) pay_at_us: u64,
}

/// What eviction knows of one caller: its buckets in this shard, taken together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Caller {
    /// When the last of its buckets will be full.
    pub(super) full_at_us: u64,
    /// When every one of its buckets can pay its cost again.
    pub(super) pay_at_us: u64,
}

#[derive(Default)]
pub(super) struct Shard {
    buckets: BucketMap<Entry>,
    next_sweep_us: u64,
    /// Every policy a bucket of this shard has belonged to, so a caller's buckets can be found.
    policies: SmallVec<[u64; 8]>,
}

impl Shard {
    pub(super) fn len(&self) -> usize {
        self.buckets.len()
    }

    pub(super) fn get(&self, key: &BucketId) -> Option<BucketState> {
        self.buckets.get(key).map(|e| e.state)
    }

    /// Stores `entry` for `key`, making room first if the shard holds `cap` buckets.
    pub(super) fn store(&mut self, key: BucketId, entry: Entry, now_us: u64, cap: usize) {
        if now_us >= self.next_sweep_us {
            self.sweep(now_us);
        }
        if self.buckets.len() >= cap && !self.buckets.contains_key(&key) {
            self.make_room(now_us, key.identity, cap);
        }
        if !self.policies.contains(&key.policy_id) {
            self.policies.push(key.policy_id);
        }
        self.buckets.insert(key, entry);
    }

    /// Forgets `key`'s bucket (it is full).
    pub(super) fn remove(&mut self, key: &BucketId) {
        self.buckets.remove(key);
    }

    /// Records that `key`'s bucket refused a request that it can pay for only at `pay_at_us`.
    pub(super) fn owe(&mut self, key: &BucketId, pay_at_us: u64) {
        if let Some(entry) = self.buckets.get_mut(key) {
            entry.pay_at_us = entry.pay_at_us.max(pay_at_us);
        }
    }

    fn sweep(&mut self, now_us: u64) {
        self.buckets.retain(|_, e| e.full_at_us > now_us);
        self.next_sweep_us = now_us.saturating_add(SWEEP_INTERVAL_US);
    }

    /// Every bucket of `identity` in this shard, taken together.
    pub(super) fn caller(&self, identity: Identity) -> Option<Caller> {
        self.policies
            .iter()
            .filter_map(|&policy_id| {
                self.buckets.get(&BucketId {
                    policy_id,
                    identity,
                })
            })
            .map(|e| Caller {
                full_at_us: e.full_at_us,
                pay_at_us: e.pay_at_us,
            })
            .reduce(|a, b| Caller {
                full_at_us: a.full_at_us.max(b.full_at_us),
                pay_at_us: a.pay_at_us.max(b.pay_at_us),
            })
    }

    /// Evicts a caller other than `keep`, all its buckets at once: of the first callers that owe
    /// nothing, the one whose buckets are all full soonest. When the scan finds only callers in
    /// debt, nothing is evicted until the shard holds [`DEBT_GROWTH`] times `cap`; then the debt
    /// paid off soonest is forgiven.
    fn make_room(&mut self, now_us: u64, keep: Identity, cap: usize) {
        let mut seen: SmallVec<[Identity; EVICTION_SAMPLE]> = SmallVec::new();
        let mut solvent: Option<(u64, Identity)> = None;
        let mut indebted: Option<(u64, Identity)> = None;
        for slot in self.buckets.keys().take(SCAN_LIMIT) {
            let identity = slot.identity;
            if identity == keep || seen.contains(&identity) {
                continue;
            }
            let Some(caller) = self.caller(identity) else {
                continue;
            };
            if caller.pay_at_us > now_us {
                indebted = sooner(indebted, (caller.pay_at_us, identity));
                continue;
            }
            solvent = sooner(solvent, (caller.full_at_us, identity));
            seen.push(identity);
            if seen.len() == EVICTION_SAMPLE {
                break;
            }
        }
        let victim = match (solvent, indebted) {
            (Some((_, identity)), _) => identity,
            (None, Some((_, identity))) if self.buckets.len() >= cap * DEBT_GROWTH => identity,
            _ => return,
        };
        self.evict(victim);
    }

    fn evict(&mut self, identity: Identity) {
        for &policy_id in &self.policies {
            self.buckets.remove(&BucketId {
                policy_id,
                identity,
            });
        }
    }
}

/// Whichever of `best` and `candidate` has the earlier instant (`best` on a tie).
fn sooner(best: Option<(u64, Identity)>, candidate: (u64, Identity)) -> Option<(u64, Identity)> {
    match best {
        Some(best) if best.0 <= candidate.0 => Some(best),
        _ => Some(candidate),
    }
}
