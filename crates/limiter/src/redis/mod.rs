//! The Redis store: every instance's buckets in one Redis, one atomic Lua call per request.
//!
//! `lua/take.lua` (the contract is its header) runs by EVALSHA on the driver's multiplexed
//! connection, so concurrent requests pipeline; a flushed script cache (NOSCRIPT) is reloaded
//! and the call retried. Each call has a time budget; a call that misses it still finishes in
//! the background and its answer is learned (`knowledge`). The driver's circuit breaker judges
//! the failure ratio of recent calls; a deny cache answers callers Redis has just refused until
//! their retry-after, and when such a refusal lapses under a flood one request per caller asks
//! again while the others are refused at once (`deny_cache`, which says why that is exact).
//! Every request's wait for its call is bounded by one budget from its arrival.
//! Hot callers spend leases of tokens here (`lease_ledger`, `lease_calls`); concurrency slots
//! are leases too (`slots`). Connections, Sentinel, Cluster routing and the fleet's
//! announcements are the driver's (`crate::driver`).

mod batch;
mod call;
mod deny_cache;
mod inspect;
mod knowledge;
mod lease_calls;
mod lease_ledger;
mod reply;
mod slots;
mod wire;

pub use deny_cache::{DenyCache, Lookup, Ticket};
pub use slots::RedisSlots;

use crate::clock::MonotonicClock;
use crate::driver::{Breaker, Permission, RedisDriver, RedisSettings, Script, TAKE_SCRIPT};
use crate::identity::Identity;
use crate::StoreMetrics;
use crate::{
    Assessments, BucketKey, BucketSpec, FleetSize, Health, Limiter, LimiterError, LocalShare, Peek,
    Take,
};
use async_trait::async_trait;
use batch::Batcher;
use knowledge::Knowledge;
use lease_ledger::Leases;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// Token buckets in Redis.
pub struct RedisStore {
    driver: Arc<RedisDriver>,
    batcher: Arc<Batcher>,
    prefix: String,
    timeout: Duration,
    breaker: Arc<Breaker>,
    knowledge: Arc<Knowledge>,
    leases: Arc<Leases>,
    sweeping: AtomicBool,
    fleet: Arc<FleetSize>,
    clock: MonotonicClock,
    metrics: StoreMetrics,
}

impl RedisStore {
    /// A store on `driver` for `settings`; nothing is connected until the first call (or the
    /// driver's `prepare`). Its answers are mirrored into `mirror`, the local fallback's
    /// buckets, when there is one; leases are sized by `fleet`.
    pub fn new(
        driver: Arc<RedisDriver>,
        settings: &RedisSettings,
        metrics: StoreMetrics,
        mirror: Option<Arc<LocalShare>>,
        fleet: Arc<FleetSize>,
    ) -> Self {
        let deny_cache =
            (settings.deny_cache_entries > 0).then(|| DenyCache::new(settings.deny_cache_entries));
        let knowledge = Arc::new(Knowledge::new(deny_cache, mirror));
        let batcher = Arc::new(Batcher::new(
            driver.connection().clone(),
            Script::new(TAKE_SCRIPT),
            settings.prefix.clone(),
            settings.ttl_margin.as_millis() as u64,
            knowledge.clone(),
            metrics.clone(),
            settings.timeout,
        ));
        Self {
            driver,
            batcher,
            prefix: settings.prefix.clone(),
            timeout: settings.timeout,
            breaker: Arc::new(Breaker::new(settings.breaker, metrics.breaker_open.clone())),
            knowledge,
            leases: Arc::new(Leases::new(settings.lease_for.as_micros() as u64)),
            sweeping: AtomicBool::new(false),
            fleet,
            clock: MonotonicClock::new(),
            metrics,
        }
    }

    /// The driver this store calls Redis through.
    pub fn driver(&self) -> &Arc<RedisDriver> {
        &self.driver
    }

    /// The key of a bucket: `prefix:{identity}:policy`. The hash tag keeps one identity's
    /// buckets in one Cluster slot; the identity is a digest, so no client value can forge
    /// or collide with another caller's key.
    pub fn key(&self, take: &Take<'_>) -> String {
        self.batcher.key(take)
    }

    /// The key of the bucket `key`.
    fn bucket_key(&self, key: &BucketKey<'_>) -> String {
        bucket_key(&self.prefix, key)
    }

    /// Asks Redis for `takes` unless the breaker says not to (the batcher learns the answer),
    /// waiting for the answer until `deadline` at the latest.
    async fn ask(
        &self,
        takes: &[Take<'_>],
        deadline: Instant,
    ) -> Result<Assessments, LimiterError> {
        let asked_at = self.clock.now_us();
        let permission = self.breaker.permit(asked_at);
        if permission == Permission::Skip {
            self.metrics.count_error(LimiterError::BreakerOpen.kind());
            return Err(LimiterError::BreakerOpen);
        }
        let answer = tokio::time::timeout_at(deadline, self.call_per_identity(takes))
            .await
            .unwrap_or(Err(LimiterError::Timeout));
        let opened = self
            .breaker
            .record(self.clock.now_us(), answer.is_ok(), permission);
        match answer {
            Ok(assessments) => {
                if assessments.iter().all(|a| a.is_allowed()) {
                    self.after_allowed(takes);
                }
                Ok(assessments)
            }
            Err(e) => {
                self.metrics.count_error(e.kind());
                if opened {
                    log::warn!("redis store failing ({e}); circuit open, real calls probe it");
                }
                Err(e)
            }
        }
    }
}

/// The turn of the request asking Redis about its caller's lapsed refusal: given back when
/// its call ends, however it ends (answered, failed, out of budget, or the request gone).
struct Turn<'a> {
    knowledge: &'a Knowledge,
    takes: &'a [Take<'a>],
    ticket: Ticket,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.knowledge.release(self.takes, self.ticket);
    }
}

#[async_trait]
impl Limiter for RedisStore {
    async fn acquire(&self, takes: &[Take<'_>]) -> Result<Assessments, LimiterError> {
        if let Some(answer) = self.answer_from_lease(takes) {
            return Ok(answer);
        }
        // One budget from the request's arrival, however long it waits in line.
        let deadline = Instant::now() + self.timeout;
        match self.knowledge.lookup(takes, self.clock.now_us()) {
            Lookup::Refused(refusal) => {
                self.metrics.deny_cache_hits.inc();
                Ok(refusal)
            }
            Lookup::Behind(refusal) => {
                // Another request of the caller is asking about the lapsed refusal.
                self.metrics.coalesced.inc();
                Ok(refusal)
            }
            Lookup::Ask(ticket) => {
                let _turn = Turn {
                    knowledge: &self.knowledge,
                    takes,
                    ticket,
                };
                self.ask(takes, deadline).await
            }
            Lookup::Unknown => self.ask(takes, deadline).await,
        }
    }

    async fn peek(&self, key: BucketKey<'_>, spec: BucketSpec) -> Result<Peek, LimiterError> {
        self.peek_bucket(key, spec).await
    }

    async fn reset(&self, keys: &[BucketKey<'_>]) -> Result<(), LimiterError> {
        self.reset_buckets(keys).await
    }

    fn forget(&self, identity: &Identity) {
        self.knowledge.forget(identity);
    }

    async fn health(&self) -> Health {
        let ping = self
            .driver
            .ping(self.timeout.max(Duration::from_millis(250)))
            .await;
        match (ping, self.breaker.is_open()) {
            (Ok(()), _) => Health::Ready,
            (Err(_), true) => Health::Down("redis is not answering (circuit breaker open)".into()),
            (Err(e), false) => Health::Down(format!("redis: {e}")),
        }
    }
}

/// The key of a bucket: `prefix:{identity}:policy`.
fn bucket_key(prefix: &str, key: &BucketKey<'_>) -> String {
    format!("{prefix}:{{{}}}:{}", key.identity.hex(), key.policy.name())
}
