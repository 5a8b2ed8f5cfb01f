//! The health-check service: runs the active checks of the live snapshot's pools (each pool's
//! pingora load-balancer service loop, started when the pool appears and stopped when a
//! reload drops it; pools a reload keeps keep their loop and their health) and keeps
//! `floodgate_backend_up` current.

use crate::proxy::{Pool, Snapshot};
use crate::telemetry::Metrics;
use arc_swap::ArcSwap;
use async_trait::async_trait;
use pingora::server::ShutdownWatch;
use pingora::services::background::BackgroundService;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// How often the pools in use and the gauge are looked at.
const TICK: Duration = Duration::from_millis(100);

/// Runs the health checks of whatever pools the live snapshot holds.
pub struct HealthChecks {
    snapshot: Arc<ArcSwap<Snapshot>>,
    metrics: Arc<Metrics>,
}

/// A pool whose checks run, and the switch that stops them.
struct Running {
    pool: Arc<Pool>,
    stop: watch::Sender<bool>,
}

impl HealthChecks {
    /// Checks for the pools of `snapshot`, reported in `metrics`.
    pub fn new(snapshot: Arc<ArcSwap<Snapshot>>, metrics: Arc<Metrics>) -> Self {
        Self { snapshot, metrics }
    }

    /// Starts the checks of new pools and stops those of pools no longer in use.
    fn follow(&self, running: &mut Vec<Running>, snapshot: &Snapshot) {
        let pools = snapshot.upstream.pools();
        running.retain(|r| {
            let kept = pools.iter().any(|p| Arc::ptr_eq(p, &r.pool));
            if !kept {
                let _ = r.stop.send(true);
            }
            kept
        });
        for pool in pools {
            if running.iter().any(|r| Arc::ptr_eq(pool, &r.pool)) {
                continue;
            }
            let (stop, stopped) = watch::channel(false);
            if let Some(checks) = pool.checks(stopped) {
                tokio::spawn(checks);
            }
            running.push(Running {
                pool: pool.clone(),
                stop,
            });
        }
    }

    /// Shows whether each configured backend is up.
    fn report(&self, snapshot: &Snapshot) {
        let pools = snapshot.upstream.pools();
        let states = pools.iter().flat_map(|pool| {
            let name = pool.name();
            pool.backends_up()
                .into_iter()
                .map(move |(backend, up)| (name, backend, up))
        });
        self.metrics.backends.show(states);
    }
}

#[async_trait]
impl BackgroundService for HealthChecks {
    async fn start(&self, mut shutdown: ShutdownWatch) {
        let mut running = Vec::new();
        let mut tick = tokio::time::interval(TICK);
        loop {
            tokio::select! {
                _ = shutdown.changed() => break,
                _ = tick.tick() => {}
            }
            let snapshot = self.snapshot.load_full();
            self.follow(&mut running, &snapshot);
            self.report(&snapshot);
        }
        for r in running {
            let _ = r.stop.send(true);
        }
    }
}
