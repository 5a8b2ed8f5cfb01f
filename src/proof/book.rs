//! What one instance knows of a verified source's values: the proven and the revoked, as
//! digests, least recently used first out past `keep`. An unknown value is never written here,
//! so invented values cost nothing and cannot push a proven one out.

use crate::identity::Identity;
use lru::LruCache;
use parking_lot::Mutex;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, Ordering};

/// Shards, so the proxy's threads seldom wait on one another.
const SHARDS: usize = 8;

/// A kept value's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    /// The backend accepted it.
    Proven,
    /// The backend accepted it once and refuses it now.
    Revoked,
}

/// A kept value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Its state.
    pub kept: Kept,
    /// When it is forgotten (Unix ms).
    pub until_ms: u64,
    /// When the fleet was last told of it (Unix ms).
    pub told_ms: u64,
    /// When one of its requests last went through although it is revoked (Unix ms; 0: never).
    pub passed_ms: u64,
}

/// What a backend's answer says of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It is accepted.
    Proven,
    /// It is refused.
    Refused,
}

/// A change the fleet must be told of: the value's new state and how long it lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    /// The value.
    pub identity: Identity,
    /// Its new state.
    pub kept: Kept,
    /// Until when (Unix ms).
    pub until_ms: u64,
}

/// The values one instance keeps of one source.
pub struct Book {
    shards: Vec<Mutex<LruCache<Identity, Entry>>>,
    /// Whether a value was ever pushed out: then a value missing here may be known elsewhere.
    evicted: AtomicBool,
}

impl Book {
    /// A book keeping at most `keep` values.
    pub fn new(keep: usize) -> Self {
        let per_shard = shard_capacity(keep);
        Self {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(LruCache::new(per_shard)))
                .collect(),
            evicted: AtomicBool::new(false),
        }
    }

    /// Keeps at most `keep` values from now on.
    pub fn resize(&self, keep: usize) {
        let per_shard = shard_capacity(keep);
        for shard in &self.shards {
            let mut shard = shard.lock();
            if per_shard < shard.cap() && shard.len() > per_shard.get() {
                self.evicted.store(true, Ordering::Relaxed);
            }
            shard.resize(per_shard);
        }
    }

    fn shard(&self, identity: &Identity) -> &Mutex<LruCache<Identity, Entry>> {
        &self.shards[identity.prefix_u64() as usize % SHARDS]
    }

    /// The value's entry at `now_ms`, if it is kept and not yet forgotten.
    pub fn get(&self, identity: &Identity, now_ms: u64) -> Option<Entry> {
        let mut shard = self.shard(identity).lock();
        let entry = *shard.get(identity)?;
        if entry.until_ms <= now_ms {
            shard.pop(identity);
            return None;
        }
        Some(entry)
    }

    /// Whether a value missing here may be known to the fleet (one was pushed out).
    pub fn may_miss(&self) -> bool {
        self.evicted.load(Ordering::Relaxed)
    }

    /// Learns `verdict` of a value at `now_ms`: a proof lasts `remember_ms`. Returns the change
    /// the fleet must be told of: a new state, or a proof whose last telling is half
    /// `remember_ms` old; `None` when nothing changed that the fleet does not know (a refusal
    /// of a value never proven is not kept at all).
    pub fn learn(
        &self,
        identity: Identity,
        verdict: Verdict,
        now_ms: u64,
        remember_ms: u64,
    ) -> Option<Change> {
        let mut shard = self.shard(&identity).lock();
        // A peek: the request that carried the value made it recent already.
        let known = shard
            .peek(&identity)
            .copied()
            .filter(|e| e.until_ms > now_ms);
        let until_ms = now_ms.saturating_add(remember_ms);
        let kept = match (verdict, known.map(|e| e.kept)) {
            (Verdict::Refused, None | Some(Kept::Revoked)) => return None,
            (Verdict::Refused, Some(Kept::Proven)) => Kept::Revoked,
            (Verdict::Proven, Some(Kept::Proven)) => {
                let told = known.map_or(0, |e| e.told_ms);
                if now_ms.saturating_sub(told) < remember_ms / 2 {
                    return None;
                }
                Kept::Proven
            }
            (Verdict::Proven, _) => Kept::Proven,
        };
        let entry = Entry {
            kept,
            until_ms,
            told_ms: now_ms,
            passed_ms: 0,
        };
        self.put(&mut shard, identity, entry);
        Some(Change {
            identity,
            kept,
            until_ms,
        })
    }

    /// Takes in a change made elsewhere (or by an operator), told at `now_ms`.
    pub fn apply(&self, change: Change, now_ms: u64) {
        let mut shard = self.shard(&change.identity).lock();
        if change.until_ms <= now_ms {
            shard.pop(&change.identity);
            return;
        }
        let passed_ms = shard.peek(&change.identity).map_or(0, |e| e.passed_ms);
        let entry = Entry {
            kept: change.kept,
            until_ms: change.until_ms,
            told_ms: now_ms,
            passed_ms,
        };
        self.put(&mut shard, change.identity, entry);
    }

    /// Forgets a value.
    pub fn forget(&self, identity: &Identity) {
        self.shard(identity).lock().pop(identity);
    }

    /// Whether a request of the revoked value may go through to the backend at `now_ms`
    /// (one every `every_ms`, so a mistaken refusal heals); notes that it did.
    pub fn let_through(&self, identity: &Identity, now_ms: u64, every_ms: u64) -> bool {
        let mut shard = self.shard(identity).lock();
        let Some(entry) = shard.peek_mut(identity) else {
            return true;
        };
        let due = entry.passed_ms == 0 || now_ms.saturating_sub(entry.passed_ms) >= every_ms;
        if due {
            entry.passed_ms = now_ms;
        }
        due
    }

    /// How many values are kept.
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().len()).sum()
    }

    /// Whether no value is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn put(&self, shard: &mut LruCache<Identity, Entry>, identity: Identity, entry: Entry) {
        if let Some((pushed, _)) = shard.push(identity, entry) {
            if pushed != identity {
                self.evicted.store(true, Ordering::Relaxed);
            }
        }
    }
}

/// Each shard's share of `keep` (at least one).
fn shard_capacity(keep: usize) -> NonZeroUsize {
    NonZeroUsize::new(keep.div_ceil(SHARDS)).unwrap_or(NonZeroUsize::MIN)
}

#[cfg(test)]
mod tests;
