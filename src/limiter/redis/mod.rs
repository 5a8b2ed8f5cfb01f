//! The Redis store: every instance's buckets in one Redis, one atomic Lua call per request.
//!
//! `lua/take.lua` (the contract is its header) runs by EVALSHA on one multiplexed connection,
//! so concurrent requests pipeline; a flushed script cache (NOSCRIPT) is reloaded and the call
//! retried. Each call has a time budget. Consecutive failures open a circuit breaker that a
//! background probe closes once Redis answers again, and a deny cache answers callers Redis
//! has just refused until their retry-after, without asking again.

mod breaker;
mod connection;
mod deny_cache;
mod hash_key;
mod redact;
mod reply;
mod settings;

pub use breaker::Breaker;
pub use deny_cache::DenyCache;
pub use hash_key::{fleet_hash_key, hash_key_name};
pub use settings::RedisSettings;

use super::{Assessment, Assessments, Health, Limiter, LimiterError, Mode, Take};
use crate::clock::MonotonicClock;
use crate::telemetry::StoreMetrics;
use async_trait::async_trait;
use connection::Connection;
use redis::{Script, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The script, compiled into the binary.
pub const TAKE_SCRIPT: &str = include_str!("../../../lua/take.lua");

/// Token buckets in Redis.
pub struct RedisStore {
    connection: Arc<Connection>,
    script: Script,
    prefix: String,
    timeout: Duration,
    ttl_margin_ms: u64,
    breaker: Arc<Breaker>,
    probe_interval: Duration,
    deny_cache: Option<DenyCache>,
    clock: MonotonicClock,
    metrics: StoreMetrics,
}

impl RedisStore {
    /// A store for `settings`; nothing is connected until the first call.
    pub fn new(settings: &RedisSettings, metrics: StoreMetrics) -> Result<Self, LimiterError> {
        Ok(Self {
            connection: Arc::new(Connection::new(settings)?),
            script: Script::new(TAKE_SCRIPT),
            prefix: settings.prefix.clone(),
            timeout: settings.timeout,
            ttl_margin_ms: settings.ttl_margin.as_millis() as u64,
            breaker: Arc::new(Breaker::new(
                settings.breaker_failures,
                metrics.breaker_open.clone(),
            )),
            probe_interval: settings.breaker_probe_interval,
            deny_cache: (settings.deny_cache_entries > 0)
                .then(|| DenyCache::new(settings.deny_cache_entries)),
            clock: MonotonicClock::new(),
            metrics,
        })
    }

    /// The key of a bucket: `prefix:{identity}:policy`. The hash tag keeps one identity's
    /// buckets in one Cluster slot; the identity is a digest, so no client value can forge
    /// or collide with another caller's key.
    pub fn key(&self, take: &Take<'_>) -> String {
        format!(
            "{}:{{{}}}:{}",
            self.prefix,
            take.key.identity.hex(),
            take.key.policy.name()
        )
    }

    /// One script call: the raw answers for `takes`, and the Redis time it ran at.
    pub async fn call(&self, takes: &[Take<'_>]) -> Result<(u64, Assessments), LimiterError> {
        let mut conn = self.connection.get().await?;
        let mut invocation = self.script.prepare_invoke();
        for take in takes {
            invocation.key(self.key(take));
        }
        invocation.arg(self.ttl_margin_ms);
        for take in takes {
            invocation
                .arg(take.spec.capacity())
                .arg(take.spec.rate_per_second())
                .arg(take.cost)
                .arg(u8::from(take.mode == Mode::Shadow));
        }
        let started = Instant::now();
        let reply: Vec<Value> =
            tokio::time::timeout(self.timeout, invocation.invoke_async(&mut conn))
                .await
                .map_err(|_| LimiterError::Timeout)?
                .map_err(|e| LimiterError::Store(e.to_string()))?;
        self.metrics
            .call_seconds
            .observe(started.elapsed().as_secs_f64());
        reply::parse(&reply, takes.len())
    }

    /// One call for `takes`; on a Cluster, one call per identity, all at once, since a call
    /// may only touch one slot. All or nothing then holds within each identity's buckets.
    async fn call_per_slot(&self, takes: &[Take<'_>]) -> Result<Assessments, LimiterError> {
        let first = takes.first().map(|t| t.key.identity);
        if !self.connection.is_cluster() || takes.iter().all(|t| Some(t.key.identity) == first) {
            return self.call(takes).await.map(|(_, assessments)| assessments);
        }
        let groups = identity_groups(takes);
        let calls = groups.iter().map(|group| {
            let group_takes: Vec<Take<'_>> = group.iter().map(|&i| takes[i]).collect();
            async move { self.call(&group_takes).await.map(|(_, a)| a) }
        });
        let answers = futures::future::try_join_all(calls).await?;
        let mut placed: Vec<Option<Assessment>> = vec![None; takes.len()];
        for (group, answer) in groups.iter().zip(answers) {
            for (&i, a) in group.iter().zip(answer) {
                placed[i] = Some(a);
            }
        }
        Ok(placed.into_iter().flatten().collect())
    }

    fn failed(&self, error: LimiterError) -> LimiterError {
        self.metrics.count_error(error.kind());
        if self.breaker.record_failure() {
            log::warn!(
                "redis store failing ({error}); circuit open, probing every {:?}",
                self.probe_interval
            );
            self.spawn_probe();
        }
        error
    }

    /// Pings Redis in the background until it answers, then closes the breaker.
    fn spawn_probe(&self) {
        let (connection, breaker) = (self.connection.clone(), self.breaker.clone());
        let (interval, budget) = (
            self.probe_interval,
            self.timeout.max(Duration::from_millis(100)),
        );
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(interval).await;
                if connection.ping(budget).await.is_ok() {
                    log::info!("redis store answers again; circuit closed");
                    breaker.close();
                    return;
                }
            }
        });
    }
}

/// The positions of `takes`, grouped by identity in order of first appearance.
fn identity_groups(takes: &[Take<'_>]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, take) in takes.iter().enumerate() {
        match groups
            .iter_mut()
            .find(|g| takes[g[0]].key.identity == take.key.identity)
        {
            Some(group) => group.push(i),
            None => groups.push(vec![i]),
        }
    }
    groups
}

#[async_trait]
impl Limiter for RedisStore {
    async fn acquire(&self, takes: &[Take<'_>]) -> Result<Assessments, LimiterError> {
        if let Some(cache) = &self.deny_cache {
            if let Some(refusal) = cache.lookup(takes, self.clock.now_us()) {
                self.metrics.deny_cache_hits.inc();
                return Ok(refusal);
            }
        }
        if self.breaker.is_open() {
            return Err(self.failed(LimiterError::BreakerOpen));
        }
        // Redis evaluated the call at or after this instant, so a refusal remembered from
        // here never outlasts the real one.
        let asked_at = self.clock.now_us();
        match self.call_per_slot(takes).await {
            Ok(assessments) => {
                self.breaker.record_success();
                if let Some(cache) = &self.deny_cache {
                    if !assessments.iter().all(|a| a.allowed) {
                        cache.remember(takes, &assessments, asked_at);
                    }
                }
                Ok(assessments)
            }
            Err(e) => Err(self.failed(e)),
        }
    }

    async fn health(&self) -> Health {
        if self.breaker.is_open() {
            return Health::Down("redis is not answering (circuit breaker open)".into());
        }
        match self
            .connection
            .ping(self.timeout.max(Duration::from_millis(250)))
            .await
        {
            Ok(()) => Health::Ready,
            Err(e) => Health::Down(format!("redis: {e}")),
        }
    }
}
