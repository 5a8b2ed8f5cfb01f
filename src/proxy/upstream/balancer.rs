//! A pool's pingora load balancer: weighted round robin or ketama consistent hashing, over a
//! fixed set of resolved backends, with the pool's active check when it has one.

use super::health::Probe;
use super::settings::Balance;
use futures::FutureExt;
use pingora::lb::discovery::Static;
use pingora::lb::selection::consistent::KetamaHashing;
use pingora::lb::selection::{BackendIter, BackendSelection, RoundRobin};
use pingora::lb::{Backend, Backends, LoadBalancer};
use pingora::server::ShutdownWatch;
use pingora::services::background::BackgroundService;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

/// The load balancer of one pool.
#[derive(Clone)]
pub(super) enum Balancer {
    /// Weighted round robin.
    RoundRobin(Arc<LoadBalancer<RoundRobin>>),
    /// Ketama consistent hashing on a key.
    Hash(Arc<LoadBalancer<KetamaHashing>>),
}

/// A balancer of kind `S` over `backends`, checked by `probe` every `interval`.
fn build<S>(
    backends: BTreeSet<Backend>,
    probe: Option<(Probe, Duration)>,
) -> Result<LoadBalancer<S>, String>
where
    S: BackendSelection + Send + Sync + 'static,
    S::Iter: BackendIter,
{
    let mut view = Backends::new(Static::new(backends));
    let interval = probe.map(|(probe, interval)| {
        view.set_health_check(Box::new(probe));
        interval
    });
    let mut lb = LoadBalancer::<S>::from_backends(view);
    // Static discovery answers at once; until this update the balancer selects nothing.
    match lb.update().now_or_never() {
        Some(Ok(())) => {}
        Some(Err(e)) => return Err(e.to_string()),
        None => return Err("static discovery did not answer at once".to_owned()),
    }
    lb.health_check_frequency = interval;
    lb.parallel_health_check = true;
    Ok(lb)
}

impl Balancer {
    /// A balancer of kind `balance` over `backends`, with an optional probe and its interval.
    pub(super) fn new(
        balance: Balance,
        backends: BTreeSet<Backend>,
        probe: Option<(Probe, Duration)>,
    ) -> Result<Self, String> {
        Ok(match balance {
            Balance::RoundRobin => Balancer::RoundRobin(Arc::new(build(backends, probe)?)),
            Balance::Hash => Balancer::Hash(Arc::new(build(backends, probe)?)),
        })
    }

    /// The first backend `accept` takes (given the backend and whether its active check
    /// passes), in the order the balance gives for `key`, looking at most `max` places.
    pub(super) fn select_with(
        &self,
        key: &[u8],
        max: usize,
        accept: impl Fn(&Backend, bool) -> bool,
    ) -> Option<Backend> {
        match self {
            Balancer::RoundRobin(lb) => lb.select_with(key, max, accept),
            Balancer::Hash(lb) => lb.select_with(key, max, accept),
        }
    }

    /// Whether `backend` passes its active check (always, without one).
    pub(super) fn healthy(&self, backend: &Backend) -> bool {
        match self {
            Balancer::RoundRobin(lb) => lb.backends().ready(backend),
            Balancer::Hash(lb) => lb.backends().ready(backend),
        }
    }

    /// Runs the active checks (pingora's load-balancer service loop) until `stop` turns true.
    pub(super) async fn run(self, stop: ShutdownWatch) {
        match self {
            Balancer::RoundRobin(lb) => lb.start(stop).await,
            Balancer::Hash(lb) => lb.start(stop).await,
        }
    }
}
