//! The Redis store: every instance's buckets in one Redis, one atomic Lua call per request.
//!
//! `lua/take.lua` (the contract is its header) runs by EVALSHA on one multiplexed connection,
//! so concurrent requests pipeline; a flushed script cache (NOSCRIPT) is reloaded and the call
//! retried. Each call has a time budget. Consecutive failures open a circuit breaker that a
//! background probe closes once Redis answers again, and a deny cache answers callers Redis
//! has just refused until their retry-after, without asking again.

use super::breaker::Breaker;
use super::bucket::Assessment;
use super::deny_cache::DenyCache;
use super::{Assessments, Health, Limiter, LimiterError, Take};
use crate::clock::MonotonicClock;
use crate::config::RedisSettings;
use crate::metrics::StoreMetrics;
use async_trait::async_trait;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{IntoConnectionInfo, Script, Value};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The script, compiled into the binary.
pub const TAKE_SCRIPT: &str = include_str!("../../lua/take.lua");

/// Shared by [`RedisStore`] and its breaker probe.
struct Connection {
    client: redis::Client,
    manager: OnceLock<ConnectionManager>,
}

impl Connection {
    /// The multiplexed connection, created on first use (inside the caller's runtime, which
    /// its reconnecting task needs). It connects lazily and reconnects by itself.
    fn get(&self) -> Result<ConnectionManager, LimiterError> {
        if let Some(manager) = self.manager.get() {
            return Ok(manager.clone());
        }
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(1)))
            .set_number_of_retries(1)
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(Duration::from_millis(200));
        let manager = ConnectionManager::new_lazy_with_config(self.client.clone(), config)
            .map_err(|e| LimiterError::Store(e.to_string()))?;
        Ok(self.manager.get_or_init(|| manager).clone())
    }

    async fn ping(&self, budget: Duration) -> Result<(), LimiterError> {
        let mut conn = self.get()?;
        let cmd = redis::cmd("PING");
        let ping = cmd.query_async::<String>(&mut conn);
        match tokio::time::timeout(budget, ping).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(LimiterError::Store(e.to_string())),
            Err(_) => Err(LimiterError::Timeout),
        }
    }
}

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
        // rediss:// needs a TLS crypto provider; installing it twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut info = settings
            .url
            .as_str()
            .into_connection_info()
            .map_err(|e| LimiterError::Store(format!("bad store.url: {}", e.category())))?;
        let mut redis_info = info.redis_settings().clone();
        if let Some(user) = &settings.username {
            redis_info = redis_info.set_username(user);
        }
        if let Some(password) = &settings.password {
            redis_info = redis_info.set_password(password);
        }
        info = info.set_redis_settings(redis_info);
        let client = redis::Client::open(info).map_err(|e| LimiterError::Store(e.to_string()))?;
        Ok(Self {
            connection: Arc::new(Connection {
                client,
                manager: OnceLock::new(),
            }),
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
            take.identity.hex(),
            take.policy_name
        )
    }

    /// One script call: the raw answers for `takes`, and the Redis time it ran at.
    pub async fn call(&self, takes: &[Take<'_>]) -> Result<(u64, Assessments), LimiterError> {
        let mut conn = self.connection.get()?;
        let mut invocation = self.script.prepare_invoke();
        for take in takes {
            invocation.key(self.key(take));
        }
        invocation.arg(self.ttl_margin_ms);
        for take in takes {
            invocation
                .arg(take.spec.capacity)
                .arg(take.spec.rate_per_second)
                .arg(take.cost);
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
        parse_reply(&reply, takes.len())
    }

    fn failed(&self, error: LimiterError) -> LimiterError {
        self.metrics.errors.with_label_values(&[error.kind()]).inc();
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

/// Reads `{ now_us, (allowed, remaining, retry_after_us, full_in_us) × n }`.
fn parse_reply(reply: &[Value], n: usize) -> Result<(u64, Assessments), LimiterError> {
    let bad = || LimiterError::Store(format!("unexpected script reply of {} values", reply.len()));
    if reply.len() != 1 + 4 * n {
        return Err(bad());
    }
    let int = |v: &Value| match v {
        Value::Int(i) => u64::try_from(*i).map_err(|_| bad()),
        _ => Err(bad()),
    };
    let float = |v: &Value| match v {
        Value::BulkString(bytes) => std::str::from_utf8(bytes)
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .ok_or_else(bad),
        _ => Err(bad()),
    };
    let now = int(&reply[0])?;
    let assessments = reply[1..]
        .chunks_exact(4)
        .map(|c| {
            Ok(Assessment {
                allowed: int(&c[0])? == 1,
                remaining: float(&c[1])?,
                retry_after_us: int(&c[2])?,
                full_in_us: int(&c[3])?,
            })
        })
        .collect::<Result<_, LimiterError>>()?;
    Ok((now, assessments))
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
        match self.call(takes).await {
            Ok((_, assessments)) => {
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
