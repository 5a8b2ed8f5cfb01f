//! The validated runtime config: what the proxy runs on. Serde never sees these types.

use crate::access::AccessRules;
use crate::identity::{ClientIpResolver, IdentityChain, JwtVerifier};
use crate::policy::Policy;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Everything the proxy needs, checked.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file this came from.
    pub path: PathBuf,
    /// The proxy listener and its workers.
    pub server: ServerSettings,
    /// The admin listener.
    pub admin: AdminSettings,
    /// Where allowed requests go.
    pub upstream: UpstreamSettings,
    /// Where buckets live.
    pub store: StoreSettings,
    /// How callers are identified (policies without sources of their own).
    pub identity: IdentityChain,
    /// How the client address is found behind trusted proxies.
    pub client_ip: ClientIpResolver,
    /// Verifies bearer tokens, when `[identity.jwt]` is configured.
    pub jwt: Option<Arc<JwtVerifier>>,
    /// Allow- and deny-lists.
    pub access: AccessRules,
    /// The limits, in config order.
    pub policies: Vec<Policy>,
    /// How refusals are answered.
    pub response: ResponseSettings,
}

/// `[server]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSettings {
    /// Proxy listener address.
    pub listen: SocketAddr,
    /// Worker threads of the proxy service.
    pub threads: usize,
    /// On SIGTERM, listeners close and in-flight requests have this long to finish.
    pub grace_period: Duration,
    /// After the grace period, how long the final shutdown step may take.
    pub shutdown_timeout: Duration,
    /// Every policy counts but never blocks.
    pub shadow: bool,
    /// Write one access-log line per request.
    pub access_log: bool,
    /// Reload when the config file changes, not only on SIGHUP.
    pub watch_config: bool,
    /// Where the pid is written (daemon mode and upgrades).
    pub pid_file: String,
    /// The socket a new binary takes the listeners from during an upgrade.
    pub upgrade_sock: String,
    /// A TLS listener, besides the plain one.
    pub tls: Option<TlsListener>,
}

/// `server.tls_listen` with its certificate chain and key (PEM files).
#[derive(Debug, Clone, PartialEq)]
pub struct TlsListener {
    /// Address of the TLS listener.
    pub listen: SocketAddr,
    /// Certificate chain, PEM.
    pub cert_file: String,
    /// Private key, PEM.
    pub key_file: String,
}

/// One backend: where, and whether over TLS.
#[derive(Debug, Clone, PartialEq)]
pub struct Backend {
    /// `host:port` as configured (resolved when the proxy starts or reloads).
    pub address: String,
    /// The name to present (SNI) and verify, for `https://` backends.
    pub tls_name: Option<String>,
}

/// `[admin]`.
#[derive(Debug, Clone, PartialEq)]
pub struct AdminSettings {
    /// Admin listener address (metrics and health).
    pub listen: SocketAddr,
    /// The window the top-offenders view covers (between one and two of these).
    pub offenders_window: Duration,
    /// How many identities the top-offenders view lists.
    pub offenders_top: usize,
}

/// `[upstream]`.
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamSettings {
    /// Backends, used round robin.
    pub backends: Vec<Backend>,
    /// CA bundle (PEM) that verifies `https://` backends; the system's roots if none.
    pub ca_file: Option<String>,
    /// Time allowed to connect to a backend.
    pub connect_timeout: Duration,
    /// Time allowed between reads from a backend.
    pub read_timeout: Duration,
    /// Time allowed for each write to a backend.
    pub write_timeout: Duration,
}

/// `[store]`.
#[derive(Debug, Clone, PartialEq)]
pub enum StoreSettings {
    /// Buckets in this process's memory.
    Memory {
        /// Most buckets held at once.
        max_entries: usize,
    },
    /// Buckets in Redis, shared by every instance.
    Redis(RedisSettings),
}

/// What to do with a request when the shared store cannot decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnError {
    /// Let it through (fail open), counted as `error`.
    Allow,
    /// Refuse it with 503 and a problem body.
    Deny,
    /// Decide it with in-memory buckets of the same policies on this instance.
    Local,
}

impl OnError {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            OnError::Allow => "allow",
            OnError::Deny => "deny",
            OnError::Local => "local",
        }
    }
}

/// `[store] kind = "redis"`.
#[derive(Clone, PartialEq)]
pub struct RedisSettings {
    /// `redis://` or `rediss://` URL of a standalone server (may hold credentials: never
    /// print it whole); empty for a cluster.
    pub url: String,
    /// Seed nodes of a Redis Cluster; empty for a standalone server.
    pub nodes: Vec<String>,
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
    /// Consecutive failures that open the circuit breaker.
    pub breaker_failures: u32,
    /// How often an open breaker probes Redis.
    pub breaker_probe_interval: Duration,
    /// Most identities remembered as refused (0 turns the deny cache off).
    pub deny_cache_entries: usize,
    /// Added to each key's expiry beyond its time to refill.
    pub ttl_margin: Duration,
    /// Most buckets of the local fallback store.
    pub fallback_max_entries: usize,
}

impl RedisSettings {
    /// The URL (or the cluster's seed nodes) with any credentials replaced by `***`.
    pub fn redacted_url(&self) -> String {
        if !self.nodes.is_empty() {
            let nodes: Vec<String> = self.nodes.iter().map(|n| redact(n)).collect();
            return format!("cluster [{}]", nodes.join(", "));
        }
        redact(&self.url)
    }
}

/// A URL with any credentials replaced by `***`.
fn redact(url: &str) -> String {
    super::redact::redact_url(url)
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

/// `[response]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseSettings {
    /// Status of a throttled response.
    pub throttle_status: u16,
}
