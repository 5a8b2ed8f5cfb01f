//! One issuer's refresher: a task that reads its directory at once, then every `refresh`
//! (within `retry` after a failure, and when a held-back key's `not-before` comes), and puts
//! the keys live then into its [`Issuer`]. The last good list stays in force on any failure,
//! which is logged at most once every [`WARN_EVERY`] with its cause. The task stops when its
//! [`Following`] drops or its shutdown watch turns true.

use super::{DirectoryError, DirectoryUrl, Fetcher, Listed};
use crate::privacy_pass::Issuer;
use crate::telemetry::{Complaints, Say};
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How often one directory's failures are logged, at most.
pub const WARN_EVERY: Duration = crate::telemetry::LOG_EVERY;

/// An issuer's keys, refreshed from its directory until dropped.
pub struct Following {
    shared: Arc<Shared>,
    rounds: watch::Receiver<u64>,
    task: Option<JoinHandle<()>>,
}

struct Shared {
    fetcher: Fetcher,
    url: DirectoryUrl,
    issuer: Arc<Issuer>,
    state: Mutex<State>,
    rounds: watch::Sender<u64>,
}

/// What the rounds so far leave behind.
#[derive(Default)]
struct State {
    last_good: Option<Listed>,
    complaints: Complaints,
}

impl Fetcher {
    /// Starts keeping `issuer`'s keys from the directory at `url`, on the current Tokio
    /// runtime (the caller enters the one it wants the task on).
    pub fn follow(
        &self,
        issuer: Arc<Issuer>,
        url: DirectoryUrl,
        shutdown: watch::Receiver<bool>,
    ) -> Following {
        let (rounds, watched) = watch::channel(0);
        let shared = Arc::new(Shared {
            fetcher: self.clone(),
            url,
            issuer,
            state: Mutex::new(State::default()),
            rounds,
        });
        let task = tokio::spawn(refresh(Arc::clone(&shared), shutdown));
        Following {
            shared,
            rounds: watched,
            task: Some(task),
        }
    }
}

impl Following {
    /// The issuer whose keys are kept.
    pub fn issuer(&self) -> &Arc<Issuer> {
        &self.shared.issuer
    }

    /// The directory read.
    pub fn url(&self) -> &DirectoryUrl {
        &self.shared.url
    }

    /// The number of rounds done so far, changing after each (to wait for the first read).
    pub fn rounds(&self) -> watch::Receiver<u64> {
        self.rounds.clone()
    }

    /// Reads now and applies the outcome as a scheduled round would; the number of keys live.
    pub async fn refresh_now(&self) -> Result<usize, DirectoryError> {
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
            .field("issuer", self.shared.issuer.name())
            .field("url", &self.shared.url.url().as_str())
            .finish_non_exhaustive()
    }
}

/// The task: a round, a wait, until told to stop.
async fn refresh(shared: Arc<Shared>, mut shutdown: watch::Receiver<bool>) {
    loop {
        let read = tokio::select! {
            _ = shutdown.wait_for(|stop| *stop) => return,
            read = shared.round() => read,
        };
        let wait = shared.next_in(read.is_err());
        tokio::select! {
            _ = shutdown.wait_for(|stop| *stop) => return,
            _ = tokio::time::sleep(wait) => {}
        }
    }
}

impl Shared {
    /// One read; the keys live now (of it, or of the last good one) put in force.
    async fn round(&self) -> Result<usize, DirectoryError> {
        let read = self.fetcher.fetch(&self.url).await;
        let now_s = self.now_s();
        let live = {
            let mut state = self.state.lock();
            match &read {
                Ok(listed) => self.recovered(&mut state, listed.clone()),
                Err(e) => self.failed(&mut state, e, Instant::now()),
            }
            state.last_good.as_ref().map(|l| l.live_at(now_s))
        };
        let count = match live {
            Some(keys) if !keys.is_empty() => self.put_in_force(keys),
            _ => 0,
        };
        self.rounds.send_modify(|n| *n += 1);
        read.map(|_| count)
    }

    fn put_in_force(&self, keys: Vec<crate::privacy_pass::IssuerKey>) -> usize {
        let count = keys.len();
        if *self.issuer.keys() != keys {
            log::info!(
                "privacy pass issuer {}: {count} keys in force from {} ({:?})",
                self.issuer.name(),
                self.url,
                keys
            );
            self.issuer.set_keys(keys);
        }
        count
    }

    fn recovered(&self, state: &mut State, listed: Listed) {
        if state.complaints.recovery() {
            log::info!(
                "privacy pass issuer {}: its directory is read again",
                self.issuer.name()
            );
        }
        state.last_good = Some(listed);
    }

    fn failed(&self, state: &mut State, cause: &DirectoryError, now: Instant) {
        let Say::Warn { held_back } = state.complaints.failure(now) else {
            return;
        };
        // Keys may be in force before this task's first good read: a reload keeps those the
        // config before it had.
        let kept = match self.issuer.keys().is_empty() {
            false => "the keys last read stay in force",
            true => "no key of it is in force",
        };
        let held_back = match held_back {
            0 => String::new(),
            n => format!(" ({n} more failures since the last logged)"),
        };
        log::warn!(
            "privacy pass issuer {}: its directory {} cannot be read: {cause}; {kept}{held_back}",
            self.issuer.name(),
            self.url
        );
    }

    /// How long until the next round.
    fn next_in(&self, failed: bool) -> Duration {
        let now_s = self.now_s();
        let state = self.state.lock();
        let turn = state.last_good.as_ref().and_then(|l| l.next_turn(now_s));
        next_round_in(self.fetcher.settings(), failed, turn.map(|at| at - now_s))
    }

    fn now_s(&self) -> u64 {
        self.fetcher.settings().clock.now_ms() / 1000
    }
}

/// The wait before the next round: `refresh`, or `retry` (if shorter) after a failure, or
/// until a held-back key turns live (`turn_in_s`, a second after), whichever is first.
fn next_round_in(
    settings: &super::DirectorySettings,
    failed: bool,
    turn_in_s: Option<u64>,
) -> Duration {
    let base = match failed {
        true => settings.retry.min(settings.refresh),
        false => settings.refresh,
    };
    match turn_in_s {
        Some(s) => base.min(Duration::from_secs(s.saturating_add(1))),
        None => base,
    }
}

#[cfg(test)]
mod tests;
