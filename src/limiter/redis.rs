//! The Redis store: every instance's buckets in one Redis, one atomic Lua call per request.
//!
//! `lua/take.lua` (the contract is its header) runs by EVALSHA on one multiplexed connection,
//! so concurrent requests pipeline; a flushed script cache (NOSCRIPT) is reloaded and the call
//! retried. Each call has a time budget. Consecutive failures open a circuit breaker that a
//! background probe closes once Redis answers again, and a deny cache answers callers Redis
//! has just refused until their retry-after, without asking again.

use super::breaker::Breaker;
use super::bucket::Assessment;
use super::connection::Connection;
use super::deny_cache::DenyCache;
use super::{Assessments, Health, Limiter, LimiterError, Take};
use crate::clock::MonotonicClock;
use crate::config::RedisSettings;
use crate::metrics::StoreMetrics;
use async_trait::async_trait;
use redis::{Script, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The script, compiled into the binary.
pub const TAKE_SCRIPT: &str = include_str!("../../lua/take.lua");

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
            take.identity.hex(),
            take.policy_name
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

    /// One call for `takes`; on a Cluster, one call per identity, since a call may only touch
    /// one slot. All or nothing then holds within each identity's buckets.
    async fn call_per_slot(&self, takes: &[Take<'_>]) -> Result<Assessments, LimiterError> {
        let first = takes.first().map(|t| t.identity);
        if !self.connection.is_cluster() || takes.iter().all(|t| Some(t.identity) == first) {
            return self.call(takes).await.map(|(_, assessments)| assessments);
        }
        let mut answers: Vec<Option<Assessment>> = vec![None; takes.len()];
        let mut done = vec![false; takes.len()];
        for i in 0..takes.len() {
            if done[i] {
                continue;
            }
            let group: Vec<usize> = (i..takes.len())
                .filter(|&j| takes[j].identity == takes[i].identity)
                .collect();
            let group_takes: Vec<Take<'_>> = group.iter().map(|&j| takes[j]).collect();
            let (_, assessments) = self.call(&group_takes).await?;
            for (&j, a) in group.iter().zip(assessments) {
                answers[j] = Some(a);
                done[j] = true;
            }
        }
        Ok(answers.into_iter().flatten().collect())
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
