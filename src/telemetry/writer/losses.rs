//! What a [`Writer`](super::Writer) lost: items dropped because its queue was full or its
//! drain had stopped, and items its drain could not write. Each loss is counted (in the
//! writer's own total and in its metric, when it has one) and warned about at most once a
//! minute ([`Complaints`], on the writer's [`Clock`]); a request that drops an item never waits
//! for the warning's lock.

use crate::clock::Clock;
use crate::telemetry::{Complaints, Say};
use parking_lot::Mutex;
use prometheus::core::Collector;
use prometheus::IntCounter;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// How a writer reports its losses.
#[derive(Debug, Clone)]
pub struct Report {
    /// What its warnings begin with (`traces`, `decisions`, `access log`).
    pub name: &'static str,
    /// What its items are, counted (`spans`, `records`, `lines`).
    pub unit: &'static str,
    /// What a full queue means, said in its warning.
    pub when_full: &'static str,
    /// The series its losses are counted in too, if any.
    pub metric: Option<IntCounter>,
}

/// Why items were lost.
#[derive(Clone, Copy)]
pub enum Cause<'a> {
    /// The queue was full: the drain is that far behind.
    Full,
    /// The drain has stopped (it could not start, or the server is shutting down).
    Stopped,
    /// The drain could not write them, for the reason it gives.
    Failed(&'a dyn fmt::Display),
}

impl fmt::Display for Cause<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Full => f.write_str("the queue is full"),
            Self::Stopped => f.write_str("the writer has stopped"),
            Self::Failed(why) => why.fmt(f),
        }
    }
}

impl fmt::Debug for Cause<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Cause({self})")
    }
}

/// A writer's losses: counted, and warned about at most once a minute.
#[derive(Debug)]
pub struct Losses {
    report: Report,
    clock: Clock,
    total: AtomicU64,
    complaints: Mutex<Complaints<u64>>,
}

impl Losses {
    /// Losses reported as `report` says, warned about on `clock`'s time.
    pub fn new(report: Report, clock: Clock) -> Self {
        Self {
            report,
            clock,
            total: AtomicU64::new(0),
            complaints: Mutex::new(Complaints::default()),
        }
    }

    /// Counts `count` items lost for `cause`, and warns unless a warning was said within the
    /// minute (or is being said by another thread): whether it warned.
    pub fn lose(&self, count: u64, cause: Cause<'_>) -> Say {
        let total = self.total.fetch_add(count, Ordering::Relaxed) + count;
        if let Some(metric) = &self.report.metric {
            metric.inc_by(count);
        }
        let Some(mut complaints) = self.complaints.try_lock() else {
            return Say::Quiet;
        };
        let say = complaints.failure(self.clock.now_ms());
        drop(complaints);
        if let Say::Warn { held_back } = say {
            self.warn(count, cause, total, held_back);
        }
        say
    }

    /// What the writer is called in its warnings.
    pub fn name(&self) -> &'static str {
        self.report.name
    }

    /// How many items were lost.
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    fn warn(&self, count: u64, cause: Cause<'_>, total: u64, held_back: u32) {
        let Report {
            name,
            unit,
            when_full,
            metric,
        } = &self.report;
        let why = match cause {
            Cause::Full => format!("{cause}: {when_full}"),
            _ => cause.to_string(),
        };
        let counted = match metric {
            Some(metric) => format!("; {} counts them", metric.desc()[0].fq_name),
            None => String::new(),
        };
        log::warn!(
            "{name}: {count} {unit} dropped, {why} ({total} in all, {held_back} other losses since \
             the last warning; said at most once a minute{counted})"
        );
    }
}
