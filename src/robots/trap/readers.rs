//! Who fetched /robots.txt and when, as digests of addresses: bounded, the oldest read first
//! out, and forgotten once older than the window. The memory store's whole table; on Redis,
//! the reads this instance saw (so a crawler that fetches the file again and again costs one
//! write to Redis a minute, and a trap request from an address seen here needs no round trip).

use crate::identity::Identity;
use lru::LruCache;
use parking_lot::Mutex;

/// The addresses' last reads.
pub(super) struct ReaderTable {
    inner: Mutex<LruCache<Identity, u64>>,
    max: usize,
}

/// What recording a read did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Noted {
    /// The reader is new, or its last read is older than the quiet time asked.
    New,
    /// The reader read within the quiet time: nothing changed.
    Recent,
}

impl ReaderTable {
    /// A table of at most `max` readers.
    pub(super) fn new(max: usize) -> Self {
        Self {
            inner: Mutex::new(LruCache::unbounded()),
            max: max.max(1),
        }
    }

    /// Notes that `reader` read at `now_ms`, unless it did within `quiet_ms` before; forgets
    /// reads before `cutoff_ms` and the oldest past the bound.
    pub(super) fn note(
        &self,
        reader: Identity,
        now_ms: u64,
        quiet_ms: u64,
        cutoff_ms: u64,
    ) -> Noted {
        let mut inner = self.inner.lock();
        let last = inner.peek(&reader).copied();
        if last.is_some_and(|at| at <= now_ms && now_ms - at < quiet_ms) {
            return Noted::Recent;
        }
        inner.push(reader, now_ms.max(last.unwrap_or(0)));
        while inner.len() > self.max {
            inner.pop_lru();
        }
        while inner.peek_lru().is_some_and(|(_, at)| *at < cutoff_ms) {
            inner.pop_lru();
        }
        Noted::New
    }

    /// Whether `reader` read at `since_ms` or later.
    pub(super) fn read_since(&self, reader: &Identity, since_ms: u64) -> bool {
        self.inner
            .lock()
            .peek(reader)
            .is_some_and(|at| *at >= since_ms)
    }

    /// How many readers are remembered.
    pub(super) fn len(&self) -> usize {
        self.inner.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::IdentityKey;

    const KEY: IdentityKey = IdentityKey::from_bytes([7; 32]);

    fn reader(n: u8) -> Identity {
        Identity::of(&KEY, "ip", &[n])
    }

    #[test]
    fn a_read_is_remembered_for_the_window() {
        let table = ReaderTable::new(10);
        assert_eq!(table.note(reader(1), 1_000, 0, 0), Noted::New);
        assert!(table.read_since(&reader(1), 1_000));
        assert!(!table.read_since(&reader(1), 1_001));
        assert!(!table.read_since(&reader(2), 0));
        // A later read by another forgets the reads before the cutoff.
        table.note(reader(2), 5_000, 0, 2_000);
        assert!(!table.read_since(&reader(1), 0));
        assert_eq!(table.len(), 1);
    }

    #[test]
    fn the_oldest_read_goes_first() {
        let table = ReaderTable::new(2);
        table.note(reader(1), 1, 0, 0);
        table.note(reader(2), 2, 0, 0);
        // Read again, 1 is the newest.
        table.note(reader(1), 3, 0, 0);
        table.note(reader(3), 4, 0, 0);
        assert_eq!(table.len(), 2);
        assert!(!table.read_since(&reader(2), 0));
        assert!(table.read_since(&reader(1), 3) && table.read_since(&reader(3), 4));
    }

    #[test]
    fn a_read_within_the_quiet_time_changes_nothing() {
        let table = ReaderTable::new(10);
        assert_eq!(table.note(reader(1), 1_000, 60_000, 0), Noted::New);
        assert_eq!(table.note(reader(1), 30_000, 60_000, 0), Noted::Recent);
        assert!(!table.read_since(&reader(1), 30_000));
        assert_eq!(table.note(reader(1), 61_000, 60_000, 0), Noted::New);
        assert!(table.read_since(&reader(1), 61_000));
        // A clock that went back never moves a read back.
        assert_eq!(table.note(reader(1), 500, 0, 0), Noted::New);
        assert!(table.read_since(&reader(1), 61_000));
    }
}
