//! What the script-against-specification tests share: a Redis store that answers each call
//! within a generous budget, a fleet of one, and a small deterministic generator.

use floodgate::limiter::driver::BreakerSettings;
use floodgate::limiter::{FleetSize, OnError, RedisDriver, RedisSettings, RedisStore};
use floodgate::telemetry::Metrics;
use std::sync::Arc;
use std::time::Duration;

/// Settings for a store the tests call directly (`RedisStore::call`): keys under `difftest`,
/// a 2 s budget per call so a loaded machine never turns an answer into a timeout, and no
/// deny cache or leases between the test and the script.
pub fn settings(url: String) -> RedisSettings {
    RedisSettings {
        url,
        nodes: Vec::new(),
        sentinel: None,
        username: None,
        password: None,
        prefix: "difftest".into(),
        timeout: Duration::from_secs(2),
        on_error: OnError::Deny,
        breaker: BreakerSettings::default(),
        fleet_size: None,
        startup_wait: Duration::from_secs(1),
        lease_for: Duration::ZERO,
        deny_cache_entries: 0,
        ttl_margin: Duration::from_millis(500),
        fallback_max_entries: 1000,
        in_flight_lease: Duration::from_secs(5),
    }
}

/// A fleet of one.
pub fn fleet() -> Arc<FleetSize> {
    let gauge = prometheus::IntGauge::new("fleet", "fleet").unwrap();
    Arc::new(FleetSize::new(Some(1), gauge))
}

/// A store with `settings`, sized by a fleet of one.
pub fn store(settings: &RedisSettings) -> RedisStore {
    store_with(settings, &Metrics::new())
}

/// A store with `settings` reporting into `metrics`, sized by a fleet of one.
pub fn store_with(settings: &RedisSettings, metrics: &Metrics) -> RedisStore {
    let driver = Arc::new(RedisDriver::new(settings).unwrap());
    RedisStore::new(driver, settings, metrics.store.clone(), None, fleet())
}

/// A small deterministic generator (no dependency needed for a test sequence).
pub struct Lcg(pub u64);

impl Lcg {
    /// The next number below `below`.
    pub fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % below
    }
}
