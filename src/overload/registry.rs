//! What lives as long as the process: each pool's watch (by pool name, so a reload keeps the
//! requests in flight and the limit learnt), the manual switch, and the logs of overload
//! starting and ending. A snapshot holds its pools' watches in its own order ([`Pools`]).

use super::level::{Level, Switch};
use super::pool::PoolGuard;
use super::settings::OverloadSettings;
use super::shared::SharedSwitch;
use crate::clock::Clock;
use crate::limiter::FleetSize;
use crate::policy::Priority;
use crate::telemetry::OverloadMetrics;
use arc_swap::ArcSwapOption;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest a switch may last.
pub const MAX_TTL: Duration = Duration::from_secs(7 * 24 * 3600);
/// Overload starting or ending is logged at most this often, per pool.
const LOG_EVERY: Duration = Duration::from_secs(1);

/// Overload protection's state.
pub struct Overload {
    pools: Mutex<HashMap<Arc<str>, Arc<PoolGuard>>>,
    switch: ArcSwapOption<Switch>,
    shared: Option<Arc<dyn SharedSwitch>>,
    fleet: Arc<FleetSize>,
    metrics: OverloadMetrics,
    /// Per pool: whether it was overloaded at the last look, and when that was last logged.
    seen: Mutex<HashMap<Arc<str>, Seen>>,
    /// Whether the running config has `[overload]`.
    configured: AtomicBool,
    /// What switches are set and expire by.
    clock: Clock,
}

/// Whether a pool was overloaded at the last look, and when that was last logged.
type Seen = (bool, Option<Instant>);

/// One pool's load, as `GET /v1/overload` shows it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PoolLoad {
    /// The pool.
    pub pool: String,
    /// Requests at its backends now.
    pub in_flight: u32,
    /// This instance's limit now.
    pub limit: u32,
    /// Requests waiting for a slot.
    pub queued: usize,
    /// Whether it is overloaded now (measured).
    pub overloaded: bool,
}

/// Why a switch was not set.
#[derive(Debug, thiserror::Error)]
pub enum SwitchError {
    /// The fleet's store could not be written: nothing changed.
    #[error("the fleet's store did not take the switch: {0}")]
    Store(String),
}

impl Overload {
    /// Overload protection for a fleet of `fleet`, reporting in `metrics`, the switch shared
    /// through `shared` (Redis) when there is one.
    pub fn new(
        fleet: Arc<FleetSize>,
        metrics: OverloadMetrics,
        shared: Option<Arc<dyn SharedSwitch>>,
    ) -> Self {
        Self {
            pools: Mutex::new(HashMap::new()),
            switch: ArcSwapOption::empty(),
            shared,
            fleet,
            metrics,
            seen: Mutex::new(HashMap::new()),
            configured: AtomicBool::new(false),
            clock: Clock::System,
        }
    }

    /// The same protection, setting and expiring switches by `clock`.
    pub fn with_clock(self, clock: Clock) -> Self {
        Self { clock, ..self }
    }

    /// What switches are set and expire by.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The watches of pools `names` (a snapshot's, in its order) under `settings`.
    pub fn pools<'n>(
        self: &Arc<Self>,
        settings: &Arc<OverloadSettings>,
        names: impl IntoIterator<Item = &'n str>,
    ) -> Pools {
        let mut known = self.pools.lock();
        let pools = names
            .into_iter()
            .map(|name| {
                let guard = known.entry(Arc::from(name)).or_insert_with_key(|name| {
                    Arc::new(PoolGuard::new(
                        name.clone(),
                        settings.clone(),
                        self.fleet.clone(),
                        &self.metrics,
                    ))
                });
                guard.configure(settings.clone());
                guard.clone()
            })
            .collect();
        Pools {
            overload: self.clone(),
            pools,
        }
    }

    /// Notes whether the running config has `[overload]` (a reload may add or remove it).
    pub fn set_configured(&self, configured: bool) {
        self.configured.store(configured, Ordering::Relaxed);
    }

    /// Whether the running config has `[overload]`.
    pub fn configured(&self) -> bool {
        self.configured.load(Ordering::Relaxed)
    }

    /// The level in force now.
    pub fn level(&self) -> Level {
        self.switch
            .load()
            .as_ref()
            .map_or(Level::Auto, |s| s.level_at(self.clock.now_ms()))
    }

    /// The switch in force now, if any.
    pub fn switch(&self) -> Option<Switch> {
        let now = self.clock.now_ms();
        let switch = self.switch.load_full()?;
        (switch.level_at(now) != Level::Auto).then(|| (*switch).clone())
    }

    /// Sets `level` for `ttl` (`auto`: ends any switch), by `by`; fleet-wide when the
    /// switch is shared. Nothing changes when the shared store cannot be written.
    pub async fn set(
        &self,
        level: Level,
        ttl: Duration,
        by: &str,
    ) -> Result<Option<Switch>, SwitchError> {
        let now = self.clock.now_ms();
        let switch = (level != Level::Auto).then(|| Switch {
            level,
            until_ms: now.saturating_add(ttl.as_millis() as u64),
            by: by.to_owned(),
            at_ms: now,
        });
        if let Some(shared) = &self.shared {
            shared
                .write(switch.as_ref(), now)
                .await
                .map_err(SwitchError::Store)?;
        }
        self.apply(switch.clone());
        Ok(switch)
    }

    fn apply(&self, switch: Option<Switch>) {
        let before = self.level();
        self.switch.store(switch.map(Arc::new));
        let after = self.level();
        self.metrics.level.set(after.gauge());
        if before != after {
            log::warn!("overload switch: {} (was {})", after.word(), before.word());
        }
    }

    /// Reads the fleet's switch (when shared), ends a switch whose time is up, takes each
    /// pool's share of a fleet that grew or shrank, and logs pools whose overload started or
    /// ended. Called every refresh interval.
    pub async fn refresh(&self) {
        if let Some(shared) = &self.shared {
            match shared.read().await {
                Ok(switch) => {
                    if switch.as_ref() != self.switch.load().as_deref() {
                        self.apply(switch);
                    }
                }
                Err(e) => log::debug!("cannot read the overload switch: {e}"),
            }
        }
        if self
            .switch
            .load()
            .as_ref()
            .is_some_and(|s| s.level_at(self.clock.now_ms()) == Level::Auto)
        {
            self.apply(None);
        }
        let pools: Vec<Arc<PoolGuard>> = self.pools.lock().values().cloned().collect();
        for pool in &pools {
            pool.retune();
        }
        self.watch(&pools);
    }

    /// Logs each of `pools` whose overload started (WARN) or ended (INFO), at most once a
    /// second.
    fn watch(&self, pools: &[Arc<PoolGuard>]) {
        let mut seen = self.seen.lock();
        for pool in pools {
            let now = pool.overloaded();
            let (was, logged) = seen.entry(pool.name().clone()).or_insert((false, None));
            if now == *was || logged.is_some_and(|at| at.elapsed() < LOG_EVERY) {
                continue;
            }
            let (in_flight, limit, queued) = pool.load();
            match now {
                true => log::warn!(
                    "overload: pool {} is overloaded ({in_flight} in flight of {limit}, {queued} waiting): shedding by priority",
                    pool.name()
                ),
                false => log::info!("overload: pool {} is no longer overloaded", pool.name()),
            }
            *was = now;
            *logged = Some(Instant::now());
        }
    }

    /// Every watched pool's load.
    pub fn loads(&self) -> Vec<PoolLoad> {
        let mut loads: Vec<PoolLoad> = self
            .pools
            .lock()
            .values()
            .map(|pool| {
                let (in_flight, limit, queued) = pool.load();
                PoolLoad {
                    pool: pool.name().to_string(),
                    in_flight,
                    limit,
                    queued,
                    overloaded: pool.overloaded(),
                }
            })
            .collect();
        loads.sort_by(|a, b| a.pool.cmp(&b.pool));
        loads
    }

    pub(super) fn count_shed(&self, pool: &str, priority: Priority, action: &str) {
        self.metrics
            .shed
            .with_label_values(&[pool, priority.word(), action])
            .inc();
    }
}

/// A snapshot's pools, watched, in the snapshot's order.
pub struct Pools {
    overload: Arc<Overload>,
    pools: Vec<Arc<PoolGuard>>,
}

impl Pools {
    /// The watch of the snapshot's pool `index`.
    pub(super) fn pool(&self, index: usize) -> Option<&Arc<PoolGuard>> {
        self.pools.get(index)
    }

    /// The state they belong to.
    pub fn overload(&self) -> &Arc<Overload> {
        &self.overload
    }
}
