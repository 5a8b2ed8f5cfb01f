//! The trap's bans as one instance holds them: the whole table of the memory store, or the
//! mirror of the fleet's table in Redis. Bounded, the oldest ban first out (a ban made again
//! counts as new), so the trap can never crowd out the operator's bans, which live elsewhere.
//!
//! The folding rule (the same in `lua/traps.lua`): a new ban of an IPv6 address covers the
//! address's /48 instead of the address once the table holds `fold_at` IPv6 bans or more
//! (addresses and /48s; half the bound by default). Below that an IPv6 caller is banned
//! alone; past it, one who walks through the addresses of its /48 (a /48 is 2^80 of them)
//! cannot fill the table with them, at the cost of its neighbours in that /48.

use super::target::{Field, TrapBan, Wanted};
use lru::LruCache;
use parking_lot::RwLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A ban held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Held {
    /// When it ends (Unix ms).
    pub(super) until_ms: u64,
    /// Whether it is an IPv6 address or network (counted by the folding rule).
    pub(super) v6: bool,
    /// The source of a proven identity.
    pub(super) source: Option<Arc<str>>,
}

/// The bans of one instance.
pub(super) struct BanTable {
    inner: RwLock<Inner>,
    /// How many are held, read without the lock (the hot path's "nothing banned").
    held: AtomicUsize,
}

struct Inner {
    /// Oldest ban at the end `pop_lru` takes from; read with `peek` only, so a lookup never
    /// makes a ban newer.
    entries: LruCache<Field, Held>,
    v6: usize,
    max: usize,
    fold_at: usize,
}

impl BanTable {
    /// A table of at most `max` bans, folding IPv6 from `fold_at` IPv6 bans on.
    pub(super) fn new(max: usize, fold_at: usize) -> Self {
        Self {
            inner: RwLock::new(Inner {
                entries: LruCache::unbounded(),
                v6: 0,
                max: max.max(1),
                fold_at,
            }),
            held: AtomicUsize::new(0),
        }
    }

    /// Makes `wanted` until `until_ms` by the folding rule at `now_ms` (a ban held already
    /// lasts the longer of the two); the field it is held under.
    pub(super) fn ban(&self, wanted: &Wanted, until_ms: u64, now_ms: u64) -> Field {
        let mut inner = self.inner.write();
        inner.expire(now_ms);
        let field = match wanted.network {
            Some(network) if inner.v6 >= inner.fold_at => network,
            _ => wanted.field,
        };
        let until_ms = inner
            .entries
            .peek(&field)
            .map_or(until_ms, |held| held.until_ms.max(until_ms));
        let held = Held {
            until_ms,
            v6: wanted.network.is_some(),
            source: wanted.source.clone(),
        };
        inner.put(field, held);
        self.held.store(inner.entries.len(), Ordering::Relaxed);
        field
    }

    /// Holds `held` under `field` as the fleet told it (the newest ban).
    pub(super) fn put(&self, field: Field, held: Held) {
        let mut inner = self.inner.write();
        inner.put(field, held);
        self.held.store(inner.entries.len(), Ordering::Relaxed);
    }

    /// Drops the ban held under `field`.
    pub(super) fn remove(&self, field: &Field) {
        let mut inner = self.inner.write();
        inner.remove(field);
        self.held.store(inner.entries.len(), Ordering::Relaxed);
    }

    /// Holds exactly `bans` (the fleet's whole table), oldest first.
    pub(super) fn replace(&self, bans: Vec<(Field, Held)>) {
        let mut inner = self.inner.write();
        inner.entries.clear();
        inner.v6 = 0;
        for (field, held) in bans {
            inner.put(field, held);
        }
        self.held.store(inner.entries.len(), Ordering::Relaxed);
    }

    /// Drops the oldest bans that ended by `now_ms`.
    pub(super) fn expire(&self, now_ms: u64) {
        let mut inner = self.inner.write();
        inner.expire(now_ms);
        self.held.store(inner.entries.len(), Ordering::Relaxed);
    }

    /// The ban held under `field` at `now_ms`, of `source` when it names an identity.
    pub(super) fn find(&self, field: &Field, source: Option<&str>, now_ms: u64) -> Option<TrapBan> {
        let inner = self.inner.read();
        let held = inner.entries.peek(field)?;
        let same_source = held.source.as_deref() == source;
        (held.until_ms > now_ms && same_source).then_some(TrapBan {
            scope: field.scope,
            until_ms: held.until_ms,
        })
    }

    /// Whether no ban is held (a ban that ended may still be counted).
    pub(super) fn is_empty(&self) -> bool {
        self.held.load(Ordering::Relaxed) == 0
    }

    /// How many bans are held (a ban that ended may still be counted).
    pub(super) fn len(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }
}

impl Inner {
    fn put(&mut self, field: Field, held: Held) {
        self.remove(&field);
        self.v6 += usize::from(held.v6);
        self.entries.push(field, held);
        while self.entries.len() > self.max {
            self.pop_oldest();
        }
    }

    fn remove(&mut self, field: &Field) {
        if let Some(gone) = self.entries.pop(field) {
            self.v6 -= usize::from(gone.v6);
        }
    }

    fn pop_oldest(&mut self) {
        if let Some((_, gone)) = self.entries.pop_lru() {
            self.v6 -= usize::from(gone.v6);
        }
    }

    fn expire(&mut self, now_ms: u64) {
        while self
            .entries
            .peek_lru()
            .is_some_and(|(_, held)| held.until_ms <= now_ms)
        {
            self.pop_oldest();
        }
    }
}

#[cfg(test)]
mod tests;
