//! The fleet's shelf of decisions (with the Redis store): each record written as JSON under
//! `<prefix>:{decisions}:<ref>` with the ring's `max_age` as its time to live, so any instance
//! can explain a decision another made. An instance writes at most `keep` records per
//! `max_age` ([`Budget`]). Records queue (the bounded [`Writer`]) to a task off the request
//! path that sends them in batches: a full queue drops the record (counted, warned about at
//! most once a minute), never holds a request up. Keys share one Cluster slot (`{decisions}`),
//! so a batch is one script call, gathered for up to 100 ms.

use super::{Budget, Kept, Record, Reference};
use crate::clock::Clock;
use crate::limiter::{read_json, RedisDriver};
use crate::telemetry::writer::{Batches, Bounds, Report, Writer};
use async_trait::async_trait;
use pingora::server::ShutdownWatch;
use pingora::services::background::BackgroundService;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How many records may wait for the writer.
pub const QUEUE: usize = 4096;
/// The queue; the most records one call writes; how long the writer lets a batch gather after
/// its first record (a flood's records then take a call per 100 ms, not one each; another
/// instance finds a decision that much later).
const BOUNDS: Bounds = Bounds {
    queue: QUEUE,
    batch: 128,
    linger: Duration::from_millis(100),
};

/// `SET key json PX ttl` for each key (ARGV[i] its JSON, the last ARGV the ttl).
const WRITE: &str = "local ttl = ARGV[#ARGV] \
                     for i, key in ipairs(KEYS) do redis.call('SET', key, ARGV[i], 'PX', ttl) end \
                     return #KEYS";

/// Where records go to be written, and where other instances' are read.
pub struct Shelf {
    redis: Arc<RedisDriver>,
    queue: Writer<Arc<Record>>,
    budget: Budget,
}

/// The writer: takes queued records and writes them, a batch at a time.
pub struct ShelfWriter {
    redis: Arc<RedisDriver>,
    batches: tokio::sync::Mutex<Batches<Arc<Record>>>,
    instance: Arc<str>,
    ttl_ms: Arc<AtomicU64>,
}

impl Shelf {
    /// A shelf in `redis`, and its writer (which must run for records to reach Redis), for
    /// records of `instance` kept `ttl_ms` (read at each write: a reload changes it).
    pub fn new(
        redis: Arc<RedisDriver>,
        instance: Arc<str>,
        ttl_ms: Arc<AtomicU64>,
    ) -> (Self, ShelfWriter) {
        let report = Report {
            name: "decisions",
            unit: "records",
            when_full: "those decisions are explained only on this instance",
            metric: None,
        };
        let (queue, batches) = Writer::new(report, BOUNDS, Clock::System);
        let writer = ShelfWriter {
            redis: redis.clone(),
            batches: tokio::sync::Mutex::new(batches),
            instance,
            ttl_ms,
        };
        let shelf = Self {
            redis,
            queue,
            budget: Budget::default(),
        };
        (shelf, writer)
    }

    /// Queues `record`, made at `now_ms`, for the writer, if the budget of `keep` records per
    /// `max_age_ms` allows (dropped, and counted, when the queue is full); returns it as this
    /// instance's ring is to keep it.
    pub fn put(&self, record: Record, (keep, max_age_ms): (u64, u64), now_ms: u64) -> Kept {
        if !self
            .budget
            .admit(record.refused(), keep, max_age_ms, now_ms)
        {
            return Kept::Own(record);
        }
        let record = Arc::new(record);
        self.queue.send(record.clone());
        Kept::Shared(record)
    }

    /// How many records the queue dropped.
    pub fn dropped(&self) -> u64 {
        self.queue.lost()
    }

    /// The record another instance kept under `reference`, as JSON.
    pub async fn get(&self, reference: &Reference) -> Result<Option<serde_json::Value>, String> {
        let key = key(self.redis.prefix(), reference);
        read_json(&self.redis, key, "decision").await
    }
}

/// The key of `reference` under `prefix` (the reference is checked: hex digits and `-`).
fn key(prefix: &str, reference: &Reference) -> String {
    format!("{prefix}:{{decisions}}:{reference}")
}

impl ShelfWriter {
    /// Writes one batch: `records` as JSON with the current time to live.
    async fn write(&self, records: &[Arc<Record>]) {
        let prefix = self.redis.prefix();
        let keys: Vec<String> = records.iter().map(|r| key(prefix, &r.reference)).collect();
        let mut args: Vec<String> = records
            .iter()
            .map(|r| r.to_json(&self.instance).to_string())
            .collect();
        args.push(self.ttl_ms.load(Ordering::Relaxed).max(1).to_string());
        if let Err(e) = self.redis.eval(WRITE, &keys, &args).await {
            log::debug!(
                "decisions: {} record(s) not written to Redis: {e}",
                keys.len()
            );
        }
    }
}

#[async_trait]
impl BackgroundService for ShelfWriter {
    async fn start(&self, mut shutdown: ShutdownWatch) {
        let mut batches = self.batches.lock().await;
        loop {
            tokio::select! {
                _ = shutdown.changed() => return,
                batch = batches.next() => match batch {
                    Some(batch) => self.write(&batch).await,
                    None => return,
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_share_one_cluster_slot_under_the_prefix() {
        let reference = Reference::parse("ABC-123").unwrap();
        assert_eq!(key("fg", &reference), "fg:{decisions}:abc-123");
    }
}
