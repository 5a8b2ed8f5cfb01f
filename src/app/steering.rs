//! Keeps this instance's view of the fleet's bans, overrides and overload switch current:
//! reads the control ledger and the switch every [`REFRESH_INTERVAL`] (at once on start), so a
//! change made on any instance applies here within a second; while the ledger cannot be read,
//! the last view stays. The fleet's proven credentials and robots.txt's trap bans are read in
//! the same round. Each round also logs pools whose overload started or ended.

use crate::control::{Control, REFRESH_INTERVAL};
use crate::overload::Overload;
use crate::proof::Keeper;
use crate::robots::trap::Traps;
use async_trait::async_trait;
use pingora::server::ShutdownWatch;
use pingora::services::background::BackgroundService;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a failing refresh is logged, at most.
const LOG_EVERY: Duration = Duration::from_secs(60);

/// Refreshes the control view.
pub(super) struct Steering {
    control: Arc<Control>,
    overload: Arc<Overload>,
    proofs: Arc<Keeper>,
    traps: Arc<Traps>,
}

impl Steering {
    /// A refresher of `control`, the overload switch, `proofs` and `traps`.
    pub(super) fn new(
        control: Arc<Control>,
        overload: Arc<Overload>,
        proofs: Arc<Keeper>,
        traps: Arc<Traps>,
    ) -> Self {
        Self {
            control,
            overload,
            proofs,
            traps,
        }
    }
}

#[async_trait]
impl BackgroundService for Steering {
    async fn start(&self, mut shutdown: ShutdownWatch) {
        let mut tick = tokio::time::interval(REFRESH_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut logged: Option<Instant> = None;
        loop {
            tokio::select! {
                _ = shutdown.changed() => return,
                _ = tick.tick() => {}
            }
            self.overload.refresh().await;
            if let Err(e) = self.proofs.refresh().await {
                log::debug!("proven credentials cannot be read from the fleet: {e}");
            }
            if let Err(e) = self.traps.refresh().await {
                log::debug!("robots.txt's trap bans cannot be read from the fleet: {e}");
            }
            match self.control.refresh().await {
                Ok(()) => logged = None,
                Err(e) if logged.is_none_or(|at| at.elapsed() >= LOG_EVERY) => {
                    log::warn!(
                        "bans and overrides cannot be read ({e}); the last known stay in force"
                    );
                    logged = Some(Instant::now());
                }
                Err(_) => {}
            }
        }
    }
}
