//! Envoy's rate limit service (`envoy.service.ratelimit.v3.RateLimitService`), so Envoy,
//! Istio, Envoy Gateway, Contour, Gloo and Emissary can ask Floodgate instead of
//! envoyproxy/ratelimit, with its configuration unchanged: descriptors meet limits
//! (`rules.rs`, `lookup.rs`), each a token bucket in Floodgate's store, one all-or-nothing take
//! per request, answered with the RateLimit headers Envoy passes to the client.

#[cfg(feature = "rls")]
mod admission;
#[cfg(feature = "rls")]
mod answer;
#[cfg(feature = "rls")]
mod decide;
#[cfg(feature = "rls")]
mod limited;
mod lookup;
mod rules;
#[cfg(feature = "rls")]
mod server;
mod yaml;

#[cfg(feature = "rls")]
pub use decide::{decide, Answering, Deciders};
pub use lookup::find;
pub use rules::{Effect, Node, RlsRules, Rule, RulesError};
#[cfg(feature = "rls")]
pub use server::{RlsLimits, RlsServer, RlsService, MAX_MESSAGE};

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How long a store call may take when `rls.timeout` is not given: half of Envoy's default
/// timeout of the rate limit filter (20 ms), the rest left for the gRPC round trip.
pub const TIMEOUT: Duration = Duration::from_millis(10);

/// `[rls]`: the listener and the rules (read from `config_dir` with the config, again on every
/// reload).
#[derive(Debug, Clone)]
pub struct RlsSettings {
    /// The gRPC listener (`127.0.0.1:8081`).
    pub listen: SocketAddr,
    /// Where envoyproxy/ratelimit's YAML files are.
    pub config_dir: PathBuf,
    /// The rules read from it.
    pub rules: Arc<RlsRules>,
    /// How long a store call may take before `store.on_error` decides (below Envoy's own
    /// timeout, so Envoy gets this service's answer).
    pub timeout: Duration,
    /// TLS with the server's certificate (`server.tls_cert_file`, `tls_key_file`), when
    /// `rls.tls = true`: Envoy then dials it with a `transport_socket`.
    pub tls: Option<RlsTls>,
    /// The most streams open at once on one connection (100).
    pub max_concurrent_streams: u32,
}

/// Streams open at once on one connection when `rls.max_concurrent_streams` is not given.
pub const MAX_CONCURRENT_STREAMS: u32 = 100;

/// The PEM files the service's TLS uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RlsTls {
    /// The certificate chain.
    pub cert_file: PathBuf,
    /// The private key.
    pub key_file: PathBuf,
}
