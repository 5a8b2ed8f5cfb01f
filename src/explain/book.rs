//! This instance's book of decisions: the ring (its own, lately) and, with the Redis store,
//! the fleet's shelf, asked only when the ring does not know a reference.

use super::shared::{Shelf, ShelfWriter};
use super::{DecisionSettings, Kept, Record, Reference, Ring};
use crate::limiter::RedisDriver;
use parking_lot::Mutex;
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Where a reference's decision was found, if anywhere.
#[derive(Debug)]
pub enum Found {
    /// In this instance's ring.
    Here(Value),
    /// On the fleet's shelf (another instance made it, or this one before its ring forgot).
    Fleet(Value),
    /// Nowhere: unknown, or past its age.
    Unknown,
    /// Not here, and the shelf could not be read.
    Unavailable(String),
}

/// The decisions of this instance, kept to be explained.
pub struct Decisions {
    ring: Mutex<Ring>,
    instance: Arc<str>,
    shelf: Option<Shelf>,
    max_age_ms: Arc<AtomicU64>,
    keep: AtomicU64,
    /// The shelf's writer until the server takes it to run.
    writer: Mutex<Option<ShelfWriter>>,
}

impl Decisions {
    /// The book of `instance` as `settings` say, writing to `redis`'s shelf when given (its
    /// writer, [`Decisions::take_writer`], must then run).
    pub fn new(
        instance: &str,
        settings: &DecisionSettings,
        redis: Option<Arc<RedisDriver>>,
    ) -> Self {
        let instance: Arc<str> = Arc::from(instance);
        let max_age_ms = Arc::new(AtomicU64::new(settings.max_age_ms()));
        let (shelf, writer) = match redis {
            Some(redis) => {
                let (shelf, writer) = Shelf::new(redis, instance.clone(), max_age_ms.clone());
                (Some(shelf), Some(writer))
            }
            None => (None, None),
        };
        let ring = Ring::new(settings.keep, settings.max_age_ms());
        Self {
            ring: Mutex::new(ring),
            instance,
            shelf,
            max_age_ms,
            keep: AtomicU64::new(settings.keep as u64),
            writer: Mutex::new(writer),
        }
    }

    /// The shelf's writer, to run in the background: once, and only with the Redis store.
    pub fn take_writer(&self) -> Option<ShelfWriter> {
        self.writer.lock().take()
    }

    /// How many records the queue to the fleet's shelf dropped.
    pub fn dropped(&self) -> u64 {
        self.shelf.as_ref().map_or(0, Shelf::dropped)
    }

    /// Keeps decisions as `settings` say from now on (a reload).
    pub fn configure(&self, settings: &DecisionSettings) {
        self.max_age_ms
            .store(settings.max_age_ms(), Ordering::Relaxed);
        self.keep.store(settings.keep as u64, Ordering::Relaxed);
        self.ring
            .lock()
            .resize(settings.keep, settings.max_age_ms());
    }

    /// Keeps `record`, made at `now_ms`, here and (queued) on the fleet's shelf.
    pub fn keep(&self, record: Record, now_ms: u64) {
        let kept = match &self.shelf {
            Some(shelf) => {
                let budget = (
                    self.keep.load(Ordering::Relaxed),
                    self.max_age_ms.load(Ordering::Relaxed),
                );
                shelf.put(record, budget, now_ms)
            }
            None => Kept::Own(record),
        };
        let evicted = self.ring.lock().push(kept, now_ms);
        // Freed here, not under the lock other requests wait on.
        drop(evicted);
    }

    /// The decision kept under `reference`, at `now_ms`: from the ring, else the shelf.
    pub async fn find(&self, reference: &Reference, now_ms: u64) -> Found {
        let here = self
            .ring
            .lock()
            .find(reference, now_ms)
            .map(|r| r.to_json(&self.instance));
        if let Some(json) = here {
            return Found::Here(json);
        }
        match &self.shelf {
            None => Found::Unknown,
            Some(shelf) => match shelf.get(reference).await {
                Ok(Some(json)) => Found::Fleet(json),
                Ok(None) => Found::Unknown,
                Err(e) => Found::Unavailable(e),
            },
        }
    }

    /// How many decisions this instance holds.
    pub fn len(&self) -> usize {
        self.ring.lock().len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether records are kept at all (`keep` above 0).
    pub fn keeps(&self) -> bool {
        self.ring.lock().keeps()
    }
}
