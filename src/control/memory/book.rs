//! The memory ledger's state: the entries with the indexes `lua/control.lua` keeps in Redis
//! (an override per policy and caller, a ban per target, expiry by time), the versions of the
//! last changes for readers, and the idempotency keys of recent calls. Pure: time is an
//! argument.

use crate::control::change::Change;
use crate::control::entry::{in_force, Ban, Contents, Entry, Kind, Override};
use crate::control::ledger::{Added, ControlError, Read};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

/// The changes kept for readers that know an earlier version.
const KEEP_CHANGES: usize = 10_000;
/// The changes one read returns at most.
const READ_CHANGES: usize = 500;
/// The expired entries one call drops at most.
const EXPIRE_AT_ONCE: usize = 100;
/// How long an idempotency key is remembered.
const KEY_LIFETIME_MS: u64 = 86_400_000;

/// What a call with an idempotency key did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Made {
    /// It added entry `id`.
    Added(u64),
    /// It deleted entry `id`.
    Deleted(u64),
}

/// The control state of one process.
#[derive(Debug, Default)]
pub(super) struct Book {
    /// The last id given.
    pub(super) next_id: u64,
    bans: BTreeMap<u64, Ban>,
    overrides: BTreeMap<u64, Override>,
    ban_index: HashMap<String, u64>,
    override_index: HashMap<String, u64>,
    /// (ends at, id).
    expiry: BTreeSet<(u64, u64)>,
    version: u64,
    changes: VecDeque<(u64, Change)>,
    keys: HashMap<String, (Made, u64)>,
    /// The keys in the order they were given, with when (to forget them in that order).
    keys_given: VecDeque<(u64, String)>,
}

impl Book {
    /// A book holding `entries`, whose ids go up to at least `next_id`.
    pub(super) fn of(entries: impl IntoIterator<Item = Entry>, next_id: u64) -> Self {
        let mut book = Self {
            next_id,
            version: 1,
            ..Self::default()
        };
        for entry in entries {
            book.next_id = book.next_id.max(entry.id());
            book.insert(entry);
        }
        book
    }

    /// Every entry held.
    pub(super) fn entries(&self) -> impl Iterator<Item = Entry> + '_ {
        let bans = self.bans.values().cloned().map(Entry::Ban);
        bans.chain(self.overrides.values().cloned().map(Entry::Override))
    }

    /// How many entries are held.
    pub(super) fn len(&self) -> usize {
        self.bans.len() + self.overrides.len()
    }

    /// Drops up to a bounded number of entries whose time has come; the change, if any.
    pub(super) fn expire(&mut self, now_ms: u64) -> Option<Change> {
        let due: Vec<u64> = self
            .expiry
            .iter()
            .take_while(|(end, _)| !in_force(Some(*end), now_ms))
            .take(EXPIRE_AT_ONCE)
            .map(|&(_, id)| id)
            .collect();
        due.iter().for_each(|&id| drop(self.take(id)));
        self.forget_keys(now_ms);
        (!due.is_empty()).then(|| self.record(Change::gone(due)))
    }

    /// Adds `entry` made at `now_ms` (see [`crate::control::Ledger::add`]); the outcome and
    /// the change to keep, if any.
    pub(super) fn add(
        &mut self,
        entry: Entry,
        (now_ms, ttl_ms): (u64, Option<u64>),
        max: usize,
        key: Option<&str>,
    ) -> Result<(Added, Option<Change>), ControlError> {
        if let Some(Made::Added(id)) = key.and_then(|k| self.keys.get(k)).map(|(m, _)| *m) {
            let held = self.get(id).map_or(Added::Replayed(id), Added::Existing);
            return Ok((held, None));
        }
        let kind = entry.kind();
        let replaced = match &entry {
            Entry::Override(o) => self.override_index.get(&o.slot()).copied(),
            Entry::Ban(b) => match self.ban_index.get(&b.target_key()) {
                Some(&id) => return Ok((self.existing(id), None)),
                None => None,
            },
        };
        let held = match kind {
            Kind::Ban => self.bans.len(),
            Kind::Override => self.overrides.len() - usize::from(replaced.is_some()),
        };
        if held >= max {
            return Err(ControlError::Full { kind, max });
        }
        if let Some(id) = replaced {
            self.take(id);
        }
        self.next_id += 1;
        let kept = entry.stamped(self.next_id, now_ms, ttl_ms);
        self.insert(kept.clone());
        if let Some(key) = key {
            self.remember(key, Made::Added(kept.id()), now_ms);
        }
        let change = self.record(Change::added(kept.clone(), replaced));
        Ok((Added::Created(kept), Some(change)))
    }

    /// Removes entry `id` of list `kind`; whether it was there, and the change.
    pub(super) fn remove(
        &mut self,
        kind: Kind,
        id: u64,
        (now_ms, key): (u64, Option<&str>),
    ) -> (bool, Option<Change>) {
        if key.and_then(|k| self.keys.get(k)).map(|(m, _)| *m) == Some(Made::Deleted(id)) {
            return (true, None);
        }
        let held = match kind {
            Kind::Ban => self.bans.contains_key(&id),
            Kind::Override => self.overrides.contains_key(&id),
        };
        if !held {
            return (false, None);
        }
        self.take(id);
        if let Some(key) = key {
            self.keys
                .insert(key.to_owned(), (Made::Deleted(id), now_ms));
        }
        (true, Some(self.record(Change::gone(vec![id]))))
    }

    /// The entry an add with `key` made, if one did.
    pub(super) fn made_under(&self, key: &str) -> Option<u64> {
        match self.keys.get(key) {
            Some((Made::Added(id), _)) => Some(*id),
            _ => None,
        }
    }

    /// What changed since version `known`.
    pub(super) fn read(&self, known: Option<u64>) -> Read {
        if known == Some(self.version) {
            return Read::Unchanged;
        }
        let oldest = self.changes.front().map(|(v, _)| *v);
        match (known, oldest) {
            (Some(known), Some(oldest)) if oldest <= known + 1 && known < self.version => {
                let start = (known + 1 - oldest) as usize;
                let changes: Vec<Change> = self
                    .changes
                    .range(start..)
                    .take(READ_CHANGES)
                    .map(|(_, c)| c.clone())
                    .collect();
                let version = known + changes.len() as u64;
                Read::Changes {
                    more: version < self.version,
                    version,
                    changes,
                }
            }
            _ => Read::Whole {
                version: self.version,
                contents: Contents::of(self.entries()),
            },
        }
    }

    /// Keeps `change` under the next version; the change.
    pub(super) fn record(&mut self, change: Change) -> Change {
        self.version += 1;
        self.changes.push_back((self.version, change.clone()));
        if self.changes.len() > KEEP_CHANGES {
            self.changes.pop_front();
        }
        change
    }

    fn remember(&mut self, key: &str, made: Made, now_ms: u64) {
        self.keys.insert(key.to_owned(), (made, now_ms));
        self.keys_given.push_back((now_ms, key.to_owned()));
    }

    /// Forgets the keys given a day or more before `now_ms`, oldest first.
    fn forget_keys(&mut self, now_ms: u64) {
        while let Some((at, key)) = self.keys_given.front() {
            if now_ms < at.saturating_add(KEY_LIFETIME_MS) {
                break;
            }
            if self.keys.get(key).is_some_and(|(_, given)| given == at) {
                self.keys.remove(key);
            }
            self.keys_given.pop_front();
        }
    }

    fn existing(&self, id: u64) -> Added {
        self.get(id).map_or(Added::Replayed(id), Added::Existing)
    }

    fn get(&self, id: u64) -> Option<Entry> {
        let ban = self.bans.get(&id).cloned().map(Entry::Ban);
        ban.or_else(|| self.overrides.get(&id).cloned().map(Entry::Override))
    }

    /// Holds `entry` (and indexes it); a ban on a held target or an override on a held slot
    /// replaces the older one.
    pub(super) fn insert(&mut self, entry: Entry) {
        let id = entry.id();
        if let Some(end) = entry.expires_at_ms() {
            self.expiry.insert((end, id));
        }
        let older = match entry {
            Entry::Ban(b) => {
                let older = self.ban_index.insert(b.target_key(), id);
                self.bans.insert(id, b);
                older
            }
            Entry::Override(o) => {
                let older = self.override_index.insert(o.slot(), id);
                self.overrides.insert(id, o);
                older
            }
        };
        if let Some(older) = older.filter(|&older| older != id) {
            self.take(older);
            self.reindex(id);
        }
    }

    /// Points the index at `id` again (after an older entry on its target was taken).
    fn reindex(&mut self, id: u64) {
        if let Some(b) = self.bans.get(&id) {
            self.ban_index.insert(b.target_key(), id);
        }
        if let Some(o) = self.overrides.get(&id) {
            self.override_index.insert(o.slot(), id);
        }
    }

    /// Removes entry `id` from wherever it is; the entry.
    pub(super) fn take(&mut self, id: u64) -> Option<Entry> {
        let entry = if let Some(b) = self.bans.remove(&id) {
            let target = b.target_key();
            if self.ban_index.get(&target) == Some(&id) {
                self.ban_index.remove(&target);
            }
            Entry::Ban(b)
        } else {
            let o = self.overrides.remove(&id)?;
            if self.override_index.get(&o.slot()) == Some(&id) {
                self.override_index.remove(&o.slot());
            }
            Entry::Override(o)
        };
        if let Some(end) = entry.expires_at_ms() {
            self.expiry.remove(&(end, id));
        }
        Some(entry)
    }
}

#[cfg(test)]
mod tests;
