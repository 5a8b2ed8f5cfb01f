//! The bouncer's loop: every quarter second it reads the fleet's decisions (Redis store), and
//! every `poll_interval` it pulls LAPI when this instance is the one that pulls; failures back
//! off (one more interval per failure, up to three) and are logged at most once a minute, across
//! outages (`telemetry::Complaints`). After a big answer the memory it took is handed back.

use super::decision::Held;
use super::give_back_memory;
use super::lapi::{Lapi, PullError};
use super::shared::{Lead, Shared, SharedDecisions};
use super::CrowdSecSettings;
use crate::clock::Clock;
use crate::control::{Blocklist, Control, Remedy};
use crate::limiter::LimiterError;
use crate::telemetry::{Complaints, Say};
use crate::telemetry::{CrowdSecMetrics, PullResult};
use async_trait::async_trait;
use parking_lot::Mutex;
use pingora::server::ShutdownWatch;
use pingora::services::background::BackgroundService;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the fleet's decisions are read from Redis (and ended ones dropped).
const TICK: Duration = Duration::from_millis(250);

/// The CrowdSec bouncer of this instance.
pub struct Bouncer {
    settings: CrowdSecSettings,
    lapi: Lapi,
    control: Arc<Control>,
    /// The fleet's decisions, on the Redis store.
    shared: Option<SharedDecisions>,
    metrics: CrowdSecMetrics,
    state: Mutex<State>,
    /// What decisions are held and expire by.
    clock: Clock,
}

/// What the loop keeps between ticks.
struct State {
    /// The decisions applied here.
    list: Blocklist,
    /// Whether `list` changed since it was last published.
    changed: bool,
    /// The shared state's version `list` reflects (Redis store).
    version: u64,
    /// Whether the next pull must be a whole one (`startup=true`).
    whole: bool,
    next_pull: Instant,
    failures: u32,
    complaints: Complaints,
    /// When decisions were last pulled, Unix ms (0: never).
    pulled_ms: u64,
    started_ms: u64,
}

impl Bouncer {
    /// The bouncer `settings` describe, publishing into `control`; on the Redis store
    /// `shared` are the fleet's decisions; decisions are held and expire by `clock`.
    pub fn new(
        settings: CrowdSecSettings,
        control: Arc<Control>,
        shared: Option<SharedDecisions>,
        metrics: CrowdSecMetrics,
        clock: Clock,
    ) -> Result<Self, PullError> {
        Ok(Self {
            lapi: Lapi::new(&settings)?,
            settings,
            control,
            shared,
            metrics,
            state: Mutex::new(State {
                list: Blocklist::default(),
                changed: false,
                version: 0,
                whole: true,
                next_pull: Instant::now(),
                failures: 0,
                complaints: Complaints::default(),
                pulled_ms: 0,
                started_ms: clock.now_ms(),
            }),
            clock,
        })
    }

    /// One tick: pull when due, read the fleet's decisions, drop ended ones, publish.
    pub async fn tick(&self) {
        if Instant::now() >= self.state.lock().next_pull {
            let pulled = self.pull().await;
            self.after_pull(pulled);
        }
        if let Some(shared) = &self.shared {
            let known = self.state.lock().version;
            match shared.read(known).await {
                Ok(read) => self.mirror(read),
                Err(e) => self.failed(&format!("the fleet's decisions cannot be read: {e}")),
            }
        }
        self.publish();
    }

    /// Pulls LAPI if this instance is the one to; whether a pull succeeded (`None`: another
    /// instance pulls).
    async fn pull(&self) -> Result<Option<()>, String> {
        let interval = self.settings.poll_interval;
        let Some(shared) = &self.shared else {
            let whole = self.state.lock().whole;
            let answer = self.lapi.pull(whole, interval).await.map_err(text)?;
            let now = self.clock.now_ms();
            let on_captcha = self.settings.on_captcha;
            let mut state = self.state.lock();
            if whole {
                state.list = Blocklist::default();
            }
            let new = held(&answer.pulled.new, now);
            let deleted = ids(&answer.pulled.deleted);
            let changed = apply(&mut state.list, &deleted, &new, on_captcha);
            state.changed |= whole || changed;
            (state.whole, state.pulled_ms) = (false, now);
            drop(state);
            after_answer(answer.big, (answer, new, deleted));
            return Ok(Some(()));
        };
        let lead = shared.lead(interval * 2).await.map_err(store_text)?;
        if lead == Lead::Elsewhere {
            self.state.lock().whole = true;
            return Ok(None);
        }
        let whole = lead == Lead::Taken || self.state.lock().whole;
        let answer = self.lapi.pull(whole, interval).await.map_err(text)?;
        let big = answer.big;
        let new = held(&answer.pulled.new, self.clock.now_ms());
        let deleted = ids(&answer.pulled.deleted);
        drop(answer);
        let kept = match whole {
            true => shared.replace(&new).await,
            false => shared.apply(&deleted, &new).await,
        };
        after_answer(big, (new, deleted));
        match kept.map_err(store_text)? {
            true => self.state.lock().whole = false,
            false => self.state.lock().whole = true,
        }
        Ok(Some(()))
    }

    /// Counts, schedules and logs the pull's end.
    fn after_pull(&self, pulled: Result<Option<()>, String>) {
        let interval = self.settings.poll_interval;
        match pulled {
            Ok(done) => {
                if done.is_some() {
                    self.metrics.pulls.inc(PullResult::Ok);
                }
                let mut state = self.state.lock();
                if state.failures > 0 && done.is_some() && state.complaints.recovery() {
                    log::info!("CrowdSec's decisions are pulled again");
                }
                state.failures = 0;
                state.next_pull = Instant::now() + interval;
            }
            Err(e) => {
                self.metrics.pulls.inc(PullResult::Error);
                let backoff = {
                    let mut state = self.state.lock();
                    state.failures += 1;
                    interval * state.failures.min(3)
                };
                self.state.lock().next_pull = Instant::now() + backoff;
                self.failed(&format!(
                    "CrowdSec's decisions cannot be pulled ({e}); the known ones stay in force, next try in {}s",
                    backoff.as_secs()
                ));
            }
        }
    }

    /// Applies what the fleet's state says.
    fn mirror(&self, read: Shared) {
        let on_captcha = self.settings.on_captcha;
        let mut state = self.state.lock();
        match read {
            Shared::Unchanged { pulled_ms } => state.pulled_ms = pulled_ms,
            Shared::Changes {
                version,
                pulled_ms,
                changes,
            } => {
                for change in changes {
                    apply(&mut state.list, &change.deleted, &change.new, on_captcha);
                }
                (state.version, state.pulled_ms, state.changed) = (version, pulled_ms, true);
            }
            Shared::Whole {
                version,
                pulled_ms,
                decisions,
                changes,
            } => {
                state.list = Blocklist::default();
                apply(&mut state.list, &[], &decisions, on_captcha);
                for change in changes {
                    apply(&mut state.list, &change.deleted, &change.new, on_captcha);
                }
                (state.version, state.pulled_ms, state.changed) = (version, pulled_ms, true);
            }
        }
    }

    /// Drops ended decisions and hands the list to the gate when it changed.
    fn publish(&self) {
        let now = self.clock.now_ms();
        let mut state = self.state.lock();
        if state.list.expire(now) > 0 {
            state.changed = true;
        }
        if std::mem::take(&mut state.changed) {
            self.control.publish_blocklist(Arc::new(state.list.clone()));
        }
        self.metrics.decisions.set(state.list.len() as i64);
        let since = if state.pulled_ms > 0 {
            state.pulled_ms
        } else {
            state.started_ms
        };
        let age = now.saturating_sub(since) as f64 / 1000.0;
        self.metrics.last_pull_age.set(age);
    }

    /// Logs `message` unless a failure was logged within the last minute.
    fn failed(&self, message: &str) {
        let said = self.state.lock().complaints.failure(Instant::now());
        match said {
            Say::Warn { held_back: 0 } => log::warn!("{message}"),
            Say::Warn { held_back } => {
                log::warn!("{message} ({held_back} more failures since the last logged)")
            }
            Say::Quiet => {}
        }
    }
}

#[async_trait]
impl BackgroundService for Bouncer {
    async fn start(&self, mut shutdown: ShutdownWatch) {
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.changed() => break,
                _ = tick.tick() => self.tick().await,
            }
        }
        // Another instance takes over at once rather than when the lease runs out.
        if let Some(shared) = &self.shared {
            let _ = shared.resign().await;
        }
    }
}

/// Deletes `deleted` from `list`, then adds `new` (LAPI's order: a value deleted and banned
/// again in one pull stays banned); whether anything changed.
fn apply(list: &mut Blocklist, deleted: &[u64], new: &[Held], on_captcha: Remedy) -> bool {
    let mut changed = false;
    for id in deleted {
        changed |= list.remove(*id);
    }
    for block in new.iter().filter_map(|h| h.block(on_captcha)) {
        list.insert(block);
        changed = true;
    }
    changed
}

/// Drops what a pull's answer left (`left`), then, after a big answer, hands the memory back.
fn after_answer<T>(big: bool, left: T) {
    drop(left);
    if big {
        give_back_memory();
    }
}

fn held(new: &[super::LapiDecision], now: u64) -> Vec<Held> {
    new.iter().filter_map(|d| d.held(now)).collect()
}

fn ids(deleted: &[super::LapiDecision]) -> Vec<u64> {
    deleted.iter().map(|d| d.id).collect()
}

fn text(e: PullError) -> String {
    e.to_string()
}

fn store_text(e: LimiterError) -> String {
    format!("Redis: {e}")
}
