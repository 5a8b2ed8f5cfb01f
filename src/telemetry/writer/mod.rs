//! The bounded writer behind the access log, the traces and the decisions' shelf: a request
//! hands its item to a [`Writer`], which queues it (bounded) and never waits; a drain off the
//! request path (a thread, or a task of its own) takes the items in [`Batches`] and writes
//! them. A full queue drops the item; every loss (dropped, or not written by the drain) is
//! counted, in the metric the writer names if any, and warned about at most once a minute on
//! the writer's [`Clock`]. Items count as unwritten from their sending until the drain has
//! written the batch they came in, so a shutdown can wait for them
//! ([`Writer::is_written`]).
//!
//! ```text
//! request ──send──▶ [ queue: Bounds::queue ] ──batch──▶ drain (thread or task)
//!    │ full: Losses (count, metric, WARN ≤ 1/min)          │ failed: Batch::lost
//! ```

mod batches;
mod losses;

pub use batches::{Batch, Batches};
pub use losses::{Cause, Losses, Report};

use crate::clock::Clock;
use crate::telemetry::Say;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::{self, error::TrySendError};

/// How much a writer holds and hands its drain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Items waiting at most; one more is dropped.
    pub queue: usize,
    /// Items in one batch at most.
    pub batch: usize,
    /// How long a batch gathers after its first item (zero: what waits, at once).
    pub linger: Duration,
}

/// What became of an item sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    /// Queued for the drain.
    Queued,
    /// Dropped (counted), and whether the loss was warned about.
    Dropped(Say),
}

/// The sending end: where requests hand their items, never waiting.
pub struct Writer<T> {
    queue: mpsc::Sender<T>,
    shared: Arc<Shared>,
    /// How many items one counts as when lost (a trace's spans), 1 unless told.
    weigh: fn(&T) -> u64,
}

/// What a writer and its batches share.
#[derive(Debug)]
struct Shared {
    losses: Losses,
    /// Items sent and not yet written.
    unwritten: AtomicUsize,
}

impl<T: Send + 'static> Writer<T> {
    /// A writer within `bounds`, its losses reported as `report` says on `clock`'s time, and
    /// its batches, which a drain must take for anything to be written.
    pub fn new(report: Report, bounds: Bounds, clock: Clock) -> (Self, Batches<T>) {
        let bounds = Bounds {
            queue: bounds.queue.max(1),
            batch: bounds.batch.max(1),
            ..bounds
        };
        let (queue, receiver) = mpsc::channel(bounds.queue);
        let shared = Arc::new(Shared {
            losses: Losses::new(report, clock),
            unwritten: AtomicUsize::new(0),
        });
        let writer = Self {
            queue,
            shared: shared.clone(),
            weigh: |_| 1,
        };
        (writer, Batches::new(receiver, bounds, shared))
    }

    /// The writer counting each item lost as `weigh` says (a trace as its spans).
    pub fn weighing(self, weigh: fn(&T) -> u64) -> Self {
        Self { weigh, ..self }
    }

    /// Queues `item` for the drain, or drops it (counted, warned about at most once a
    /// minute) when the queue is full or the drain has stopped.
    pub fn send(&self, item: T) -> Sent {
        // Counted before the drain can see it, so the count never goes below zero.
        self.shared.unwritten.fetch_add(1, Ordering::AcqRel);
        let Err(refused) = self.queue.try_send(item) else {
            return Sent::Queued;
        };
        self.shared.unwritten.fetch_sub(1, Ordering::AcqRel);
        let (item, cause) = match refused {
            TrySendError::Full(item) => (item, Cause::Full),
            TrySendError::Closed(item) => (item, Cause::Stopped),
        };
        Sent::Dropped(self.shared.losses.lose((self.weigh)(&item), cause))
    }

    /// Whether every item sent so far was written (or lost): what a shutdown waits for.
    pub fn is_written(&self) -> bool {
        self.shared.unwritten.load(Ordering::Acquire) == 0
    }

    /// How many items (as weighed) were lost, dropped or not written.
    pub fn lost(&self) -> u64 {
        self.shared.losses.total()
    }
}

impl<T> fmt::Debug for Writer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Writer")
            .field("name", &self.shared.losses.name())
            .field(
                "waiting",
                &(self.queue.max_capacity() - self.queue.capacity()),
            )
            .field("unwritten", &self.shared.unwritten.load(Ordering::Relaxed))
            .field("lost", &self.shared.losses.total())
            .finish()
    }
}

#[cfg(test)]
mod tests;
