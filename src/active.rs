//! What a config reload replaces ([`Active`]: lists, identity, policies, backends) and what it
//! keeps ([`Shared`]: the bucket stores and the metrics), so buckets survive a reload.

use crate::config::{Backend, Config, OnError, StoreSettings, UpstreamSettings};
use crate::gate::{Fallback, Gate};
use crate::limiter::{Limiter, LimiterError, MemoryStore, RedisStore};
use crate::metrics::Metrics;
use crate::proxy::Callers;
use pingora::lb::{selection::RoundRobin, LoadBalancer};
use std::collections::HashMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;

/// Why the proxy's parts could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A backend address could not be resolved.
    #[error("cannot resolve the backends: {0}")]
    Backends(#[from] std::io::Error),
    /// The store could not be set up.
    #[error("cannot set up the store: {0}")]
    Store(#[from] LimiterError),
    /// The TLS listener's certificate or key could not be loaded.
    #[error("cannot set up the TLS listener: {0}")]
    Tls(String),
}

/// The parts that live as long as the process.
#[derive(Clone)]
pub struct Shared {
    /// Where buckets live.
    pub limiter: Arc<dyn Limiter>,
    /// The local buckets used when a shared store fails (`on_error = "local"`).
    pub local: Option<Arc<MemoryStore>>,
    /// What the store's failure means.
    pub on_error: OnError,
    /// Every series.
    pub metrics: Arc<Metrics>,
}

impl Shared {
    /// The stores `config` asks for, reporting into `metrics`.
    pub fn new(config: &Config, metrics: Arc<Metrics>) -> Result<Self, BuildError> {
        Ok(match &config.store {
            StoreSettings::Memory { max_entries } => Shared {
                limiter: Arc::new(MemoryStore::new(*max_entries)),
                local: None,
                on_error: OnError::Allow,
                metrics,
            },
            StoreSettings::Redis(redis) => Shared {
                limiter: Arc::new(RedisStore::new(redis, metrics.store.clone())?),
                local: (redis.on_error == OnError::Local)
                    .then(|| Arc::new(MemoryStore::new(redis.fallback_max_entries))),
                on_error: redis.on_error,
                metrics,
            },
        })
    }

    fn fallback(&self) -> Fallback {
        match (self.on_error, &self.local) {
            (OnError::Local, Some(local)) => Fallback::Local(local.clone()),
            (OnError::Deny, _) => Fallback::Deny,
            _ => Fallback::Allow,
        }
    }
}

/// The parts a reload swaps, all at once.
pub struct Active {
    /// Client address, token verification, lists.
    pub callers: Callers,
    /// Policies and the limiter call.
    pub gate: Gate,
    /// The backends, round robin.
    pub upstream: Arc<LoadBalancer<RoundRobin>>,
    /// The TLS name (SNI, verified) of each `https://` backend's resolved address.
    pub tls_names: HashMap<SocketAddr, String>,
    /// Backend timeouts and list.
    pub upstream_settings: UpstreamSettings,
    /// Whether to write one access-log line per request.
    pub access_log: bool,
}

impl Active {
    /// The parts `config` describes, drawing on `shared`.
    pub fn build(config: &Config, shared: &Shared) -> Result<Self, BuildError> {
        let gate = Gate::new(
            &config.policies,
            config.identity.clone(),
            shared.limiter.clone(),
            shared.fallback(),
            &shared.metrics,
            config.response.throttle_status,
        );
        Ok(Active {
            callers: Callers {
                client_ip: config.client_ip.clone(),
                jwt: config.jwt.clone(),
                access: config.access.clone(),
            },
            gate,
            upstream: Arc::new(LoadBalancer::try_from_iter(
                config.upstream.backends.iter().map(|b| b.address.as_str()),
            )?),
            tls_names: tls_names(&config.upstream.backends)?,
            upstream_settings: config.upstream.clone(),
            access_log: config.server.access_log,
        })
    }
}

/// Every address an `https://` backend resolves to, with the name it is verified by.
fn tls_names(backends: &[Backend]) -> std::io::Result<HashMap<SocketAddr, String>> {
    let mut names = HashMap::new();
    for backend in backends {
        if let Some(name) = &backend.tls_name {
            for addr in backend.address.to_socket_addrs()? {
                names.insert(addr, name.clone());
            }
        }
    }
    Ok(names)
}
