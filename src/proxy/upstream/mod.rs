//! Where allowed requests go: pools of backends (`pool`), each with its load balancer
//! (`balancer`: round robin or consistent hashing), active health checks (`health`), passive
//! ejection (`ejection`) and CA (`ca`); the `[[route]]` tables that pick a pool (`routes`);
//! and the plain settings they are built from (`settings`).

mod balancer;
mod ca;
mod ejection;
mod health;
mod pool;
mod routes;
mod settings;
mod slot;

pub use pool::Pool;
pub use settings::{
    ActiveCheck, Backend, Balance, HealthSettings, PoolRoute, PoolSettings, UpstreamSettings,
    DEFAULT_POOL,
};

use crate::policy::RouteFacts;
use pingora::connectors::http::Connector;
use pingora::prelude::HttpPeer;
use pingora::{Error, ErrorType, Result};
use pool::{Spec, Timeouts};
use routes::Routes;
use smallvec::SmallVec;
use std::net::ToSocketAddrs;
use std::sync::Arc;

/// Why the pools could not be built.
#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    /// A backend's name did not resolve.
    #[error("cannot resolve backend `{address}` of pool `{pool}`: {source}")]
    Resolve {
        /// The pool.
        pool: String,
        /// The backend as configured.
        address: String,
        /// What the resolver said.
        source: std::io::Error,
    },
    /// A pool's CA bundle could not be used.
    #[error("cannot use the CA bundle `{path}` of pool `{pool}`: {reason}")]
    Ca {
        /// The pool.
        pool: String,
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A pool's balancer or health check could not be set up.
    #[error("cannot set up pool `{pool}`: {reason}")]
    Pool {
        /// The pool.
        pool: String,
        /// Why.
        reason: String,
    },
}

/// The pools and the routes to them.
pub struct Upstream {
    pools: Vec<Arc<Pool>>,
    routes: Routes,
    idle_timeout: std::time::Duration,
    ja4_header: Option<http::HeaderName>,
    h2fp_header: Option<http::HeaderName>,
}

/// Where one request is going: the pool its route picked, the backends tried so far, and the
/// one whose answer is awaited.
#[derive(Debug, Default)]
pub struct Attempts {
    pool: Option<usize>,
    tried: SmallVec<[usize; 4]>,
    current: Option<usize>,
}

impl Attempts {
    /// The pool picked for the request, once a backend was asked for (or its slot).
    pub fn pool(&self) -> Option<usize> {
        self.pool
    }

    /// Notes that the request goes to `pool` (its route's, found before a backend is asked
    /// for): the route is not matched again.
    pub fn going_to(&mut self, pool: usize) {
        self.pool = Some(pool);
    }
}

impl Upstream {
    /// Resolves the pools of `settings` (DNS happens here, never while reading the config).
    /// A pool of `previous` whose settings and addresses are unchanged is kept as it is, with
    /// its health and ejections.
    pub fn resolve(
        settings: &UpstreamSettings,
        previous: Option<&Upstream>,
    ) -> Result<Self, UpstreamError> {
        let mut connector = None;
        let mut pools = Vec::with_capacity(settings.pools.len());
        for pool in &settings.pools {
            let spec = spec(settings, pool)?;
            let kept = previous
                .into_iter()
                .flat_map(|p| &p.pools)
                .find(|p| *p.spec() == spec);
            pools.push(match kept {
                Some(kept) => kept.clone(),
                None => {
                    // One probe connector for the pools built now that check (it loads the
                    // system's roots).
                    let probes = spec.settings.health.active.as_ref().map(|_| {
                        connector
                            .get_or_insert_with(|| Arc::new(Connector::new(None)))
                            .clone()
                    });
                    Arc::new(Pool::build(spec, probes)?)
                }
            });
        }
        Ok(Self {
            pools,
            routes: Routes::new(&settings.routes),
            idle_timeout: settings.idle_timeout,
            ja4_header: settings.ja4_header.clone(),
            h2fp_header: settings.h2fp_header.clone(),
        })
    }

    /// How long an upgraded connection (WebSocket) may idle, each way.
    pub fn idle_timeout(&self) -> std::time::Duration {
        self.idle_timeout
    }

    /// The header that tells the backends a request's JA4 (`upstream.ja4_header`).
    pub fn ja4_header(&self) -> Option<&http::HeaderName> {
        self.ja4_header.as_ref()
    }

    /// The header that tells the backends a request's HTTP/2 fingerprint
    /// (`upstream.h2fp_header`).
    pub fn h2fp_header(&self) -> Option<&http::HeaderName> {
        self.h2fp_header.as_ref()
    }

    /// Whether any route looks at the host.
    pub fn needs_host(&self) -> bool {
        self.routes.needs_host()
    }

    /// Whether every request goes to the default pool.
    pub fn has_routes(&self) -> bool {
        !self.routes.is_empty()
    }

    /// The pools, the default first.
    pub fn pools(&self) -> &[Arc<Pool>] {
        &self.pools
    }

    /// The index of the pool a request with `facts` goes to.
    pub fn route(&self, facts: &RouteFacts<'_>) -> usize {
        self.routes.pool_for(facts)
    }

    /// How pool `pool` spreads requests.
    pub fn balance(&self, pool: usize) -> Balance {
        self.pools
            .get(pool)
            .map_or(Balance::RoundRobin, |p| p.balance())
    }

    /// The peer for the next attempt of a request to pool `pool`: a backend of that pool not
    /// tried yet, chosen by its balance (`key` is the caller, for hashing).
    pub fn peer(&self, attempts: &mut Attempts, pool: usize, key: &[u8]) -> Result<Box<HttpPeer>> {
        let index = *attempts.pool.get_or_insert(pool);
        // Asked again with no failure counted: pingora retries a request whose reused
        // connection the backend had closed (nothing reached it). That backend may serve it
        // on a fresh connection.
        if let Some(slot) = attempts.current.take() {
            attempts.tried.retain(|s| *s != slot);
        }
        let pool = self
            .pools
            .get(index)
            .ok_or_else(|| Error::explain(ErrorType::InternalError, "no such pool"))?;
        let slot = pool
            .pick(key, &attempts.tried)
            .ok_or_else(|| Error::explain(ErrorType::ConnectNoRoute, "no backend to select"))?;
        let peer = pool
            .peer(slot)
            .ok_or_else(|| Error::explain(ErrorType::InternalError, "a backend of no pool"))?;
        attempts.tried.push(slot);
        attempts.current = Some(slot);
        Ok(Box::new(peer))
    }

    fn current(&self, attempts: &Attempts) -> Option<&Pool> {
        self.pools.get(attempts.pool?).map(|p| &**p)
    }

    /// Whether a failed connection may be retried on another backend of the same pool.
    pub fn may_retry(&self, attempts: &Attempts) -> bool {
        self.current(attempts)
            .is_some_and(|p| attempts.tried.len() < p.address_count())
    }

    /// Counts a failure of the backend in use (connect failure or timeout); counted once.
    pub fn failed(&self, attempts: &mut Attempts) {
        if let (Some(pool), Some(slot)) = (self.current(attempts), attempts.current.take()) {
            pool.failed(slot);
        }
    }

    /// Counts the answer of the backend in use: a 5xx is a failure; counted once, on the
    /// final answer (an interim `100 Continue` is not one).
    pub fn answered(&self, attempts: &mut Attempts, status: u16) {
        if (100..200).contains(&status) && status != 101 {
            return;
        }
        if let (Some(pool), Some(slot)) = (self.current(attempts), attempts.current.take()) {
            match status >= 500 {
                true => pool.failed(slot),
                false => pool.succeeded(slot),
            }
        }
    }

    /// The `Host` to send upstream instead of the client's, if the request's pool sets one.
    pub fn host(&self, attempts: &Attempts) -> Option<&str> {
        self.current(attempts)?.host()
    }

    /// The names of the pools none of whose backends is up.
    pub fn pools_down(&self) -> Vec<&str> {
        self.pools
            .iter()
            .filter(|p| p.is_down())
            .map(|p| p.name())
            .collect()
    }
}

/// What pool `pool` of `settings` is built from: its addresses resolved, its CA read.
fn spec(settings: &UpstreamSettings, pool: &PoolSettings) -> Result<Spec, UpstreamError> {
    let mut addresses = Vec::new();
    for (member, backend) in pool.backends.iter().enumerate() {
        let resolved =
            backend
                .address
                .to_socket_addrs()
                .map_err(|source| UpstreamError::Resolve {
                    pool: pool.name.clone(),
                    address: backend.address.clone(),
                    source,
                })?;
        for addr in resolved {
            // The first backend an address appears under keeps it.
            if !addresses.iter().any(|(_, a)| *a == addr) {
                addresses.push((member, addr));
            }
        }
    }
    let uses_tls = pool.backends.iter().any(|b| b.tls_name.is_some());
    let ca = match (&pool.ca_file, uses_tls) {
        (Some(path), true) => Some(ca::read_bundle(path).map_err(|reason| UpstreamError::Ca {
            pool: pool.name.clone(),
            path: path.clone(),
            reason,
        })?),
        _ => None,
    };
    Ok(Spec {
        settings: pool.clone(),
        timeouts: Timeouts {
            connect: settings.connect_timeout,
            read: settings.read_timeout,
            write: settings.write_timeout,
        },
        addresses,
        ca,
        own_ca: pool.ca_file != settings.ca_file,
    })
}

#[cfg(test)]
mod tests;
