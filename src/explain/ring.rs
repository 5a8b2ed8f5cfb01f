//! The decisions this instance made lately: a ring of at most `keep` records, none older than
//! `max_age`. Pushing drops the oldest past `keep`; a lookup reads from the newest back and
//! ignores a record past its age. Time is an argument.

use super::{Record, Reference};
use smallvec::SmallVec;
use std::collections::VecDeque;
use std::ops::Deref;
use std::sync::Arc;

/// The records a push let go of: one, once the ring is full (more after a quiet spell).
pub type Evicted = SmallVec<[Kept; 1]>;

/// A record as the ring holds it: its own (no allocation of its own), or shared with the
/// queue to the fleet's shelf.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // inline on purpose: a record kept costs no allocation
pub enum Kept {
    /// Held by the ring alone.
    Own(Record),
    /// Also queued for the fleet's shelf.
    Shared(Arc<Record>),
}

impl Deref for Kept {
    type Target = Record;

    fn deref(&self) -> &Record {
        match self {
            Kept::Own(record) => record,
            Kept::Shared(record) => record,
        }
    }
}

/// The ring.
#[derive(Debug, Default)]
pub struct Ring {
    records: VecDeque<Kept>,
    keep: usize,
    max_age_ms: u64,
}

impl Ring {
    /// A ring of at most `keep` records, each found for `max_age_ms`.
    pub fn new(keep: usize, max_age_ms: u64) -> Self {
        Self {
            records: VecDeque::with_capacity(keep.min(1024)),
            keep,
            max_age_ms,
        }
    }

    /// Holds at most `keep` records from now on, each found for `max_age_ms` (a reload).
    pub fn resize(&mut self, keep: usize, max_age_ms: u64) {
        (self.keep, self.max_age_ms) = (keep, max_age_ms);
        let extra = self.records.len().saturating_sub(keep);
        self.records.drain(..extra);
        self.records.shrink_to(keep);
    }

    /// Keeps `record`, letting go of the oldest (and, at `now_ms`, those past their age): they
    /// are returned, for the caller to free once it no longer holds the ring's lock.
    pub fn push(&mut self, record: Kept, now_ms: u64) -> Evicted {
        let mut evicted = Evicted::new();
        if self.keep == 0 {
            return evicted;
        }
        while self.records.len() >= self.keep || self.is_old(self.records.front(), now_ms) {
            evicted.extend(self.records.pop_front());
        }
        if self.records.len() == self.records.capacity() {
            // Doubled as it fills, but never past `keep`: a record is a few hundred bytes.
            let len = self.records.len();
            self.records.reserve_exact(len.max(1).min(self.keep - len));
        }
        self.records.push_back(record);
        evicted
    }

    /// The record kept under `reference`, at `now_ms`, if it is not past its age.
    pub fn find(&self, reference: &Reference, now_ms: u64) -> Option<&Record> {
        self.records
            .iter()
            .rev()
            .take_while(|r| !self.is_old(Some(r), now_ms))
            .find(|r| r.reference == *reference)
            .map(Deref::deref)
    }

    /// How many records are kept.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether records are kept at all (`keep` above 0).
    pub fn keeps(&self) -> bool {
        self.keep > 0
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    fn is_old(&self, record: Option<&Kept>, now_ms: u64) -> bool {
        record.is_some_and(|r| now_ms.saturating_sub(r.at_ms) > self.max_age_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::record::allowed;

    fn record(id: &str, at_ms: u64) -> Kept {
        Kept::Own(allowed(id, at_ms, "/"))
    }

    #[test]
    fn the_ring_keeps_the_newest_records() {
        let mut ring = Ring::new(2, 60_000);
        for (i, id) in ["a1", "b2", "c3"].into_iter().enumerate() {
            ring.push(record(id, i as u64), i as u64);
        }
        assert_eq!(ring.len(), 2);
        assert!(ring.find(&Reference::parse("a1").unwrap(), 3).is_none());
        assert_eq!(
            ring.find(&Reference::parse("C3").unwrap(), 3)
                .unwrap()
                .at_ms,
            2
        );
        ring.resize(1, 60_000);
        assert!(ring.find(&Reference::parse("b2").unwrap(), 3).is_none());
        assert_eq!(ring.len(), 1);
    }

    #[test]
    fn a_record_past_its_age_is_not_found_and_goes() {
        let mut ring = Ring::new(10, 1_000);
        ring.push(record("a1", 0), 0);
        let a1 = Reference::parse("a1").unwrap();
        assert!(ring.find(&a1, 1_000).is_some());
        assert!(ring.find(&a1, 1_001).is_none());
        let evicted = ring.push(record("b2", 2_000), 2_000);
        assert_eq!((ring.len(), evicted.len()), (1, 1));
    }

    #[test]
    fn the_ring_grows_no_larger_than_keep() {
        let mut ring = Ring::new(3_000, 60_000);
        for i in 0..3_500 {
            ring.push(record("a1", i), i);
        }
        assert_eq!(ring.len(), 3_000);
        assert!(
            ring.records.capacity() <= 3_000,
            "{}",
            ring.records.capacity()
        );
    }

    #[test]
    fn keep_0_keeps_nothing() {
        let mut ring = Ring::new(0, 1_000);
        assert!(ring.push(record("a1", 0), 0).is_empty());
        assert!(ring.is_empty());
    }
}
