//! A graceful shutdown that ends when the work does. Told to stop (SIGTERM, or SIGQUIT once
//! the listeners are handed over), pingora closes the listeners, then sleeps the whole
//! `server.grace_period` before it stops its runtimes, whether or not anything is in flight:
//! an idle instance took 5 s to exit. [`InService`] counts the connections being served
//! (every listener's, and the rate limit service until it has drained); once the grace period
//! starts, [`Drain`] ends the process as soon as none is left and the access log is written.
//! What is still in flight keeps the rest of the grace period, and pingora's own steps after it.

use super::PidFile;
use crate::proxy::Snapshot;
use arc_swap::ArcSwap;
use async_trait::async_trait;
use parking_lot::Mutex;
use pingora::server::{ExecutionPhase, ShutdownWatch};
use pingora::services::background::BackgroundService;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::broadcast::{self, error::RecvError};

/// How often a draining process looks whether anything is left.
const LOOK_EVERY: Duration = Duration::from_millis(10);

/// The connections being served, across the listeners.
#[derive(Debug, Default)]
pub(super) struct InService {
    open: AtomicUsize,
}

/// One connection in service, counted until dropped.
pub(super) struct Serving(Arc<InService>);

impl InService {
    /// Counts one more connection in service until the guard drops.
    pub(super) fn enter(self: &Arc<Self>) -> Serving {
        self.open.fetch_add(1, Ordering::AcqRel);
        Serving(Arc::clone(self))
    }

    fn is_idle(&self) -> bool {
        self.open.load(Ordering::Acquire) == 0
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A background service in service from its start until it returns: the rate limit service,
/// which drains its own streams once told to stop; the ACME client and the CrowdSec bouncer,
/// which finish their round and give their fleet lease up.
pub(super) struct UntilDone<S> {
    inner: Arc<S>,
    in_service: Arc<InService>,
}

impl<S> UntilDone<S> {
    /// `inner`, counted `in_service` while it runs.
    pub(super) fn new(inner: Arc<S>, in_service: Arc<InService>) -> Self {
        Self { inner, in_service }
    }
}

#[async_trait]
impl<S: BackgroundService + Send + Sync> BackgroundService for UntilDone<S> {
    async fn start(&self, shutdown: ShutdownWatch) {
        let _serving = self.in_service.enter();
        self.inner.start(shutdown).await;
    }
}

/// Whether the access log in force has written every line it was given.
type Written = Box<dyn Fn() -> bool + Send>;

/// What ends the process once a graceful shutdown has nothing left to drain.
pub(super) struct Drain {
    in_service: Arc<InService>,
    /// `server.grace_period`, in pingora's whole seconds.
    grace: Duration,
    written: Written,
}

impl Drain {
    /// Waits for `in_service` and the access log of the snapshot in force, within `grace`.
    pub(super) fn new(
        in_service: Arc<InService>,
        grace: Duration,
        snapshot: Arc<ArcSwap<Snapshot>>,
    ) -> Self {
        let written = move || {
            let snapshot = snapshot.load();
            snapshot.access_log.as_ref().is_none_or(|l| l.is_written())
        };
        Self {
            in_service,
            grace,
            written: Box::new(written),
        }
    }

    /// Watches `phases` from a thread of its own: once a graceful shutdown's grace period
    /// starts, ends the process (exit 0, `pid_file` removed) as soon as nothing is in service
    /// and the access log is written, or leaves the shutdown to pingora when the grace period
    /// ends first. The pid file stays in the returned slot until then.
    pub(super) fn watch(
        self,
        mut phases: broadcast::Receiver<ExecutionPhase>,
        pid_file: PidFile,
    ) -> Arc<Mutex<Option<PidFile>>> {
        let slot = Arc::new(Mutex::new(Some(pid_file)));
        let held = Arc::clone(&slot);
        let spawned = std::thread::Builder::new()
            .name("drain".into())
            .spawn(move || {
                if grace_period_starts(&mut phases) && self.drained() {
                    log::info!("graceful shutdown: nothing left in flight; exiting");
                    drop(held.lock().take());
                    log::logger().flush();
                    std::process::exit(0);
                }
            });
        if let Err(e) = spawned {
            log::warn!("a shutdown will wait the whole grace period: {e}");
        }
        slot
    }

    /// Waits until nothing is in service and the access log is written: `false` when the
    /// grace period ends first.
    fn drained(&self) -> bool {
        let deadline = Instant::now() + self.grace;
        loop {
            if self.in_service.is_idle() && (self.written)() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(LOOK_EVERY);
        }
    }
}

/// Waits for the grace period of a graceful shutdown: `false` when the server ends without
/// one (SIGINT).
fn grace_period_starts(phases: &mut broadcast::Receiver<ExecutionPhase>) -> bool {
    loop {
        match phases.blocking_recv() {
            Ok(ExecutionPhase::ShutdownGracePeriod) => return true,
            Ok(ExecutionPhase::ShutdownRuntimes | ExecutionPhase::Terminated) => return false,
            Ok(_) | Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_counts_until_its_guard_drops() {
        let in_service = Arc::new(InService::default());
        let (one, two) = (in_service.enter(), in_service.enter());
        drop(one);
        assert!(!in_service.is_idle());
        drop(two);
        assert!(in_service.is_idle());
    }

    #[test]
    fn a_drain_ends_when_nothing_is_left_or_gives_up_at_the_grace_periods_end() {
        let in_service = Arc::new(InService::default());
        let drain = |grace| Drain {
            in_service: Arc::clone(&in_service),
            grace,
            written: Box::new(|| true),
        };
        assert!(drain(Duration::ZERO).drained());
        let _busy = in_service.enter();
        assert!(!drain(Duration::ZERO).drained());
    }
}
