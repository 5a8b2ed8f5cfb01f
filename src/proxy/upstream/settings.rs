//! The plain settings of `[upstream]`, its pools and the `[[route]]` tables, as the config
//! layer hands them over (names unresolved: they resolve when the server is built).

use crate::policy::Route;
use std::time::Duration;

/// The name of the pool `upstream.backends` forms.
pub const DEFAULT_POOL: &str = "default";

/// One configured backend: where, whether over TLS, and its share of the traffic.
#[derive(Debug, Clone, PartialEq)]
pub struct Backend {
    /// `host:port` as configured (resolved when the proxy starts or reloads).
    pub address: String,
    /// The name to present (SNI) and verify, for `https://` backends (which are offered
    /// HTTP/2 and HTTP/1.1 by ALPN).
    pub tls_name: Option<String>,
    /// Whether the backend speaks cleartext HTTP/2 with prior knowledge (`h2c://`).
    pub h2c: bool,
    /// Relative share of the requests (round robin) or of the hash ring (1 unless configured).
    pub weight: usize,
}

/// How a pool spreads requests over its backends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Balance {
    /// In turn, in proportion to the weights.
    RoundRobin,
    /// Consistent hashing (ketama) on the caller, so a caller sticks to one backend.
    Hash,
}

impl Balance {
    /// The word the config uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Balance::RoundRobin => "round_robin",
            Balance::Hash => "hash",
        }
    }
}

/// Active health checks: a `GET path` to every backend every `interval`.
#[derive(Debug, Clone, PartialEq)]
pub struct ActiveCheck {
    /// The path probed (2xx and 3xx answers are healthy).
    pub path: String,
    /// Time between two probes of a backend.
    pub interval: Duration,
    /// Time one probe may take, connect to last byte.
    pub timeout: Duration,
    /// Consecutive failed probes that take a healthy backend out.
    pub unhealthy_after: usize,
    /// Consecutive good probes that bring an unhealthy backend back.
    pub healthy_after: usize,
}

impl Default for ActiveCheck {
    /// `GET /` every 5 s, 1 s for each probe; out after 3 failures, back after 2 successes.
    fn default() -> Self {
        Self {
            path: "/".to_owned(),
            interval: Duration::from_secs(5),
            timeout: Duration::from_secs(1),
            unhealthy_after: 3,
            healthy_after: 2,
        }
    }
}

/// How a pool learns that a backend is down.
#[derive(Debug, Clone, PartialEq)]
pub struct HealthSettings {
    /// Active checks, when a health table is configured.
    pub active: Option<ActiveCheck>,
    /// Consecutive failed requests (connect failure, timeout, 5xx) that eject a backend;
    /// 0 turns passive ejection off.
    pub eject_after: u32,
    /// How long an ejected backend stays out.
    pub eject_for: Duration,
}

impl Default for HealthSettings {
    fn default() -> Self {
        Self {
            active: None,
            eject_after: 5,
            eject_for: Duration::from_secs(10),
        }
    }
}

/// One pool: `upstream.backends` (named [`DEFAULT_POOL`]) or an `[upstream.pools.NAME]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolSettings {
    /// The pool's name (a metric label and what routes name).
    pub name: String,
    /// Its backends.
    pub backends: Vec<Backend>,
    /// How requests are spread over them.
    pub balance: Balance,
    /// The `Host` header sent upstream (and the TLS name of `https://` backends), instead of
    /// the client's.
    pub host: Option<String>,
    /// CA bundle (PEM) verifying this pool's `https://` backends, own or `upstream.ca_file`.
    pub ca_file: Option<String>,
    /// Active checks and passive ejection.
    pub health: HealthSettings,
}

/// A `[[route]]`: requests its `match` fits go to pool number `pool`.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolRoute {
    /// Which requests.
    pub route: Route,
    /// Index into [`UpstreamSettings::pools`].
    pub pool: usize,
}

/// `[upstream]` with its pools, and the `[[route]]` tables.
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamSettings {
    /// The pools; the first is [`DEFAULT_POOL`] (`upstream.backends`).
    pub pools: Vec<PoolSettings>,
    /// Routes in config order; the first that fits a request picks its pool, else the first pool.
    pub routes: Vec<PoolRoute>,
    /// `upstream.ca_file`: the CA bundle of the shared connector; the system's roots if none.
    pub ca_file: Option<String>,
    /// Time allowed to connect to a backend.
    pub connect_timeout: Duration,
    /// Time allowed between reads from a backend.
    pub read_timeout: Duration,
    /// Time allowed for each write to a backend.
    pub write_timeout: Duration,
    /// Time an upgraded connection (WebSocket) may idle, each way, instead of `read_timeout`.
    pub idle_timeout: Duration,
    /// `upstream.ja4_header`: the header that tells the backend the request's JA4 (a
    /// client's own of that name is removed); none sent if unset.
    pub ja4_header: Option<http::HeaderName>,
    /// `upstream.h2fp_header`: the header that tells the backend the request's HTTP/2
    /// fingerprint (a client's own of that name is removed); none sent if unset.
    pub h2fp_header: Option<http::HeaderName>,
    /// `upstream.score_header` and `upstream.signals_header`.
    pub score_headers: ScoreHeaders,
}

/// The headers that tell the backend a request's bot score (`upstream.score_header`, a number)
/// and its signals (`upstream.signals_header`, names comma-separated, `-` for none); a
/// client's own of those names are removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScoreHeaders {
    /// `upstream.score_header`.
    pub score: Option<http::HeaderName>,
    /// `upstream.signals_header`.
    pub signals: Option<http::HeaderName>,
}

impl ScoreHeaders {
    /// Whether either is set (so every request is scored).
    pub fn asked(&self) -> bool {
        self.score.is_some() || self.signals.is_some()
    }
}
