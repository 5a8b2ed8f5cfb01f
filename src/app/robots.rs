//! robots.txt under a config: the keeper that outlives reloads (the trap's tables, the
//! backend's copies), and which hosts' copies a config follows: the default pool's (with
//! its `host`, else the backend's own address) and each route's named host, at the first
//! backend of the route's pool, never with a Host a client chose.

use crate::clock::Clock;
use crate::config::Config;
use crate::proxy::PoolSettings;
use crate::robots::fetch::Target;
use crate::robots::trap::Traps;
use crate::robots::{RobotsError, RobotsKeeper, SiteRobots};
use crate::telemetry::Metrics;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The keeper of `traps`, counting into `metrics`, fetching and expiring by `clock`.
pub(super) fn keeper(traps: Traps, metrics: &Metrics, clock: &Clock) -> Arc<RobotsKeeper> {
    let counters = metrics.robots.clone();
    Arc::new(RobotsKeeper::new(Arc::new(traps), counters, clock.clone()))
}

/// Where the memory store keeps the trap's random path: beside the control state file.
pub(super) fn trap_file(state_file: &Path) -> PathBuf {
    let mut name = state_file.as_os_str().to_owned();
    name.push(".trap");
    PathBuf::from(name)
}

/// robots.txt as `config` asks, when `[robots]` is configured.
pub(super) fn site(
    keeper: &RobotsKeeper,
    config: &Config,
) -> Result<Option<Arc<SiteRobots>>, RobotsError> {
    let Some(settings) = &config.robots else {
        return Ok(None);
    };
    let catalogue = &config.bots.crawlers.catalogue;
    let site = keeper.site(settings, catalogue, targets(config))?;
    Ok(Some(Arc::new(site)))
}

/// The hosts whose backend copies `config` follows, the default pool's first.
fn targets(config: &Config) -> Vec<Target> {
    let pools = &config.upstream.pools;
    let default = pools.first().and_then(|pool| {
        let backend = pool.backends.first()?;
        let host = pool.host.clone().unwrap_or_else(|| backend.address.clone());
        target(&host, pool)
    });
    let routed = config.upstream.routes.iter().filter_map(|route| {
        let host = route.route.host.as_deref()?;
        target(host, pools.get(route.pool)?)
    });
    let mut targets: Vec<Target> = Vec::new();
    for target in default.into_iter().chain(routed) {
        if !targets.iter().any(|t| t.host() == target.host()) {
            targets.push(target);
        }
    }
    targets
}

/// `host`'s copy at the first backend of `pool`.
fn target(host: &str, pool: &PoolSettings) -> Option<Target> {
    let backend = pool.backends.first()?;
    let scheme = match backend.tls_name {
        Some(_) => "https",
        None => "http",
    };
    let url = format!("{scheme}://{}", backend.address);
    match Target::new(host, &url) {
        Ok(target) => Some(target),
        Err(e) => {
            log::warn!("robots.txt cannot be read for {host}: {e}");
            None
        }
    }
}
