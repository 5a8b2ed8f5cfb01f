//! `[store] kind = "redis"`: the Redis store's settings, as validated from the config.

use super::breaker::BreakerSettings;
use super::redact::redact_url;
use super::sentinel::SentinelSettings;
use crate::OnError;
use std::fmt;
use std::time::Duration;

/// How to reach Redis and how to behave when it is slow or away.
#[derive(Clone, PartialEq)]
pub struct RedisSettings {
    /// `redis://` or `rediss://` URL of a standalone server (may hold credentials: never
    /// print it whole); empty for a cluster.
    pub url: String,
    /// Seed nodes of a Redis Cluster; empty for a standalone server.
    pub nodes: Vec<String>,
    /// The sentinels that say where the master is, instead of `url` or `nodes`.
    pub sentinel: Option<SentinelSettings>,
    /// User name, overriding the URL's.
    pub username: Option<String>,
    /// Password, overriding the URL's.
    pub password: Option<String>,
    /// Prefix of every key.
    pub prefix: String,
    /// Budget of one store call.
    pub timeout: Duration,
    /// What to do when Redis cannot decide.
    pub on_error: OnError,
    /// When the circuit breaker opens and how it recovers.
    pub breaker: BreakerSettings,
    /// The number of instances the local fallback divides by; learned from Redis when `None`.
    pub fleet_size: Option<u32>,
    /// How long the proxy waits for Redis before it starts serving (then starts degraded).
    pub startup_wait: Duration,
    /// How long a hot caller's lease of tokens lasts (zero turns leasing off).
    pub lease_for: Duration,
    /// Most identities remembered as refused (0 turns the deny cache off).
    pub deny_cache_entries: usize,
    /// Added to each key's expiry beyond its time to refill.
    pub ttl_margin: Duration,
    /// Most buckets of the local fallback store.
    pub fallback_max_entries: usize,
    /// How long a concurrency slot (`max_in_flight`) is held in Redis without being
    /// released: an instance that dies gives its slots back after this.
    pub in_flight_lease: Duration,
}

impl RedisSettings {
    /// The URL (or the cluster's seed nodes) with any credentials replaced by `***`.
    pub fn redacted_url(&self) -> String {
        if let Some(sentinel) = &self.sentinel {
            return super::sentinel::describe(sentinel);
        }
        if !self.nodes.is_empty() {
            let nodes: Vec<String> = self.nodes.iter().map(|n| redact_url(n)).collect();
            return format!("cluster [{}]", nodes.join(", "));
        }
        redact_url(&self.url)
    }
}

impl fmt::Debug for RedisSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisSettings")
            .field("url", &self.redacted_url())
            .field("username", &self.username.as_ref().map(|_| "***"))
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .field("on_error", &self.on_error)
            .finish_non_exhaustive()
    }
}
