//! One host's refresher: a task that fetches its robots.txt at once, then every `refresh`
//! (within a minute after a failure), and keeps the copy the keeper's rule gives, readable
//! without a lock. It stops when its [`Following`] handle drops or its shutdown watch turns
//! true (or its sender drops). A failure is logged at most once a minute; a request never
//! waits for a fetch.

use super::complaints::next_fetch_in;
use super::{Fetched, Fetcher, RobotsCopy, Target, KEPT_FOR};
use crate::telemetry::{Complaints, Say};
use arc_swap::ArcSwap;
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Called with the new copy whenever what is enforced changes (not when the same file is
/// read again): where a caller parses it once.
pub type OnChange = Box<dyn Fn(&Arc<RobotsCopy>) + Send + Sync>;

/// A host's copy, refreshed in the background until dropped.
pub struct Following {
    shared: Arc<Shared>,
    task: Option<JoinHandle<()>>,
}

struct Shared {
    fetcher: Fetcher,
    target: Target,
    copy: ArcSwap<RobotsCopy>,
    /// Held while a fetch's outcome is applied, so two never interleave.
    keeper: Mutex<Complaints>,
    on_change: OnChange,
}

impl Fetcher {
    /// Starts refreshing `target`'s copy (from within a Tokio runtime).
    pub fn spawn(&self, target: Target, shutdown: watch::Receiver<bool>) -> Following {
        self.spawn_with(target, shutdown, Box::new(|_| {}))
    }

    /// As [`Fetcher::spawn`], calling `on_change` whenever what is enforced changes.
    pub fn spawn_with(
        &self,
        target: Target,
        shutdown: watch::Receiver<bool>,
        on_change: OnChange,
    ) -> Following {
        let shared = Arc::new(Shared {
            fetcher: self.clone(),
            target,
            copy: ArcSwap::from_pointee(RobotsCopy::NoCopy),
            keeper: Mutex::new(Complaints::default()),
            on_change,
        });
        let task = tokio::spawn(refresh(Arc::clone(&shared), shutdown));
        Following {
            shared,
            task: Some(task),
        }
    }
}

impl Following {
    /// What is enforced now.
    pub fn current(&self) -> Arc<RobotsCopy> {
        self.shared.copy.load_full()
    }

    /// The host and backend refreshed.
    pub fn target(&self) -> &Target {
        &self.shared.target
    }

    /// Fetches now, applies the outcome as a scheduled fetch would, and returns it.
    pub async fn refresh_now(&self) -> Fetched {
        self.shared.round().await
    }

    /// Waits until the task has stopped (after its shutdown watch turned true).
    pub async fn stopped(&mut self) {
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Following {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

impl std::fmt::Debug for Following {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Following")
            .field("target", &self.shared.target)
            .field("fetched_at_ms", &self.current().fetched_at_ms())
            .finish_non_exhaustive()
    }
}

/// The task: a round, a wait, until told to stop.
async fn refresh(shared: Arc<Shared>, mut shutdown: watch::Receiver<bool>) {
    let refresh = shared.fetcher.settings().refresh;
    loop {
        let fetched = tokio::select! {
            _ = shutdown.wait_for(|stop| *stop) => return,
            fetched = shared.round() => fetched,
        };
        let failed = matches!(fetched, Fetched::Unavailable(_));
        tokio::select! {
            _ = shutdown.wait_for(|stop| *stop) => return,
            _ = tokio::time::sleep(next_fetch_in(failed, refresh)) => {}
        }
    }
}

impl Shared {
    /// One fetch, its outcome kept and logged.
    async fn round(&self) -> Fetched {
        let fetched = self.fetcher.fetch(&self.target).await;
        let now_ms = self.fetcher.settings().clock.now_ms();
        let mut complaints = self.keeper.lock();
        let previous = self.copy.load_full();
        let next = Arc::new(previous.next(fetched.clone(), now_ms));
        self.copy.store(Arc::clone(&next));
        self.log(&mut complaints, &fetched, &next);
        if !next.same_rules(&previous) {
            (self.on_change)(&next);
        }
        fetched
    }

    fn log(&self, complaints: &mut Complaints, fetched: &Fetched, kept: &RobotsCopy) {
        let (host, backend) = (self.target.host(), self.target.backend());
        let Fetched::Unavailable(cause) = fetched else {
            if complaints.recovery() {
                log::info!("robots.txt of {host} is read from {backend} again");
            }
            return;
        };
        let Say::Warn { held_back } = complaints.failure(Instant::now()) else {
            return;
        };
        let kept = match kept.fetched_at_ms() {
            Some(at) => format!(
                "the copy read at {} stays in force until {}",
                at_ms(at),
                at_ms(at.saturating_add(KEPT_FOR.as_millis() as u64))
            ),
            None => "no robots.txt is enforced".to_owned(),
        };
        let held_back = match held_back {
            0 => String::new(),
            n => format!(" ({n} more failures since the last logged)"),
        };
        log::warn!(
            "robots.txt of {host} cannot be read from {backend}: {cause}; {kept}{held_back}"
        );
    }
}

/// A Unix millisecond time, as a log line says it.
fn at_ms(ms: u64) -> String {
    let ms = i64::try_from(ms).unwrap_or(i64::MAX);
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.round(jiff::Unit::Second).unwrap_or(t).to_string())
        .unwrap_or_else(|_| format!("{ms} ms"))
}
