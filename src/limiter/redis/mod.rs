//! The Redis store: every instance's buckets in one Redis, one atomic Lua call per request.
//!
//! `lua/take.lua` (the contract is its header) runs by EVALSHA on one multiplexed connection,
//! so concurrent requests pipeline; a flushed script cache (NOSCRIPT) is reloaded and the call
//! retried. Each call has a time budget; a call that misses it still finishes in the
//! background and its answer is learned (`knowledge`). A circuit breaker judges the failure
//! ratio of recent calls (`breaker`); a deny cache answers callers Redis has just refused until
//! their retry-after, and when such a refusal lapses under a flood one request per caller asks
//! again while the others wait for its answer (`flight`, which says what is exact about it).
//! Every request's wait, in line or for its call, is bounded by one budget from its arrival.
//! Instances announce themselves so the local fallback knows its share
//! (`fleet`).

mod batch;
mod breaker;
mod call;
mod connection;
mod deny_cache;
mod eval;
mod fleet;
mod flight;
mod hash_key;
mod in_flight;
mod inspect;
mod knowledge;
mod lease;
mod leasing;
mod redact;
mod reply;
mod script;
mod sentinel;
mod settings;
mod wire;

pub use breaker::{Breaker, BreakerSettings, Permission};
pub use deny_cache::{DenyCache, Lookup};
pub use fleet::{ANNOUNCE_INTERVAL, MEMBERSHIP_LIFETIME};
pub use hash_key::{fleet_hash_key, hash_key_name};
pub use in_flight::RedisSlots;
pub use script::{FLEET_SCRIPT, INFLIGHT_SCRIPT, PEEK_SCRIPT, TAKE_SCRIPT};
pub use sentinel::{SentinelSettings, WATCH_INTERVAL};
pub use settings::RedisSettings;

use super::{
    Assessments, BucketKey, BucketSpec, FleetSize, Health, Limiter, LimiterError, LocalShare, Peek,
    Take,
};
use crate::clock::MonotonicClock;
use crate::identity::Identity;
use crate::telemetry::StoreMetrics;
use async_trait::async_trait;
use batch::Batcher;
use connection::Connection;
use flight::{Flights, Place};
use knowledge::Knowledge;
use lease::Leases;
use script::Script;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// Token buckets in Redis.
pub struct RedisStore {
    connection: Arc<Connection>,
    /// A connection of its own for the control plane (`eval`): its polling never queues
    /// behind, or ahead of, the decisions on `connection`.
    side: Arc<Connection>,
    batcher: Arc<Batcher>,
    prefix: String,
    timeout: Duration,
    in_flight_lease: Duration,
    breaker: Arc<Breaker>,
    knowledge: Arc<Knowledge>,
    flights: Flights,
    leases: Arc<Leases>,
    sweeping: AtomicBool,
    fleet: Arc<FleetSize>,
    clock: MonotonicClock,
    metrics: StoreMetrics,
}

impl RedisStore {
    /// A store for `settings`; nothing is connected until the first call (or [`Self::prepare`]).
    /// Its answers are mirrored into `mirror`, the local fallback's buckets, when there is one;
    /// leases are sized by `fleet`.
    pub fn new(
        settings: &RedisSettings,
        metrics: StoreMetrics,
        mirror: Option<Arc<LocalShare>>,
        fleet: Arc<FleetSize>,
    ) -> Result<Self, LimiterError> {
        let deny_cache =
            (settings.deny_cache_entries > 0).then(|| DenyCache::new(settings.deny_cache_entries));
        let connection = Arc::new(Connection::new(settings)?);
        let knowledge = Arc::new(Knowledge::new(deny_cache, mirror));
        let batcher = Arc::new(Batcher::new(
            connection.clone(),
            Script::new(TAKE_SCRIPT),
            settings.prefix.clone(),
            settings.ttl_margin.as_millis() as u64,
            knowledge.clone(),
            metrics.clone(),
            settings.timeout,
        ));
        Ok(Self {
            side: Arc::new(Connection::new(settings)?),
            connection,
            batcher,
            prefix: settings.prefix.clone(),
            timeout: settings.timeout,
            in_flight_lease: settings.in_flight_lease,
            breaker: Arc::new(Breaker::new(settings.breaker, metrics.breaker_open.clone())),
            knowledge,
            flights: Flights::new(),
            leases: Arc::new(Leases::new(settings.lease_for.as_micros() as u64)),
            sweeping: AtomicBool::new(false),
            fleet,
            clock: MonotonicClock::new(),
            metrics,
        })
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
                if assessments.iter().all(|a| a.allowed) {
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

    /// Asks Redis for a caller whose refusal just lapsed: one request at a time per caller
    /// (`flight`). A follower is refused from the leader's refusal if it brought one back, and
    /// otherwise asks itself; waiting and asking both end by `deadline`.
    async fn ask_in_turn(
        &self,
        takes: &[Take<'_>],
        deadline: Instant,
    ) -> Result<Assessments, LimiterError> {
        let Some(first) = takes.first() else {
            return Ok(Assessments::new());
        };
        let landing = match self.flights.join(first.key.identity) {
            Place::Lead(_lead) => return self.ask(takes, deadline).await,
            Place::Follow(landing) => landing,
        };
        if landing.by(deadline).await.is_err() {
            self.metrics.count_error(LimiterError::Timeout.kind());
            return Err(LimiterError::Timeout);
        }
        if let Lookup::Refused(refusal) = self.knowledge.lookup(takes, self.clock.now_us()) {
            self.metrics.coalesced.inc();
            return Ok(refusal);
        }
        self.ask(takes, deadline).await
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
            Lookup::Lapsed => self.ask_in_turn(takes, deadline).await,
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
            .connection
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
