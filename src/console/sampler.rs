//! The sampler: every second it reads the policies' request counters (and the store's call
//! latency), turns them into per-second figures and keeps them in the rate history; on the
//! Redis store it also shares them with the fleet and keeps the fleet's sum instead.

use super::fleet::{self, FRESH_MS, SHARE_SCRIPT};
use super::ring::{Deltas, History, SECONDS};
use crate::clock::Clock;
use crate::limiter::RedisDriver;
use crate::telemetry::Metrics;
use async_trait::async_trait;
use parking_lot::Mutex;
use pingora::server::ShutdownWatch;
use pingora::services::background::BackgroundService;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::MissedTickBehavior;

/// Whose requests the figures count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// This instance's (the memory store, or Redis not answering this second).
    Instance,
    /// Every live instance's sharing the Redis store.
    Fleet,
}

/// The rate history and the latest store latency, shared by the sampler and the console.
#[derive(Default)]
pub struct Rates {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    history: History,
    newest: Option<u64>,
    scope: Option<Scope>,
    instances: u32,
    latency_ms: Option<f64>,
}

impl Rates {
    /// Records the figures of `second`, counted over `scope` (`instances` of them).
    pub fn record(
        &self,
        second: u64,
        figures: &BTreeMap<String, [u64; 2]>,
        scope: Scope,
        instances: u32,
    ) {
        let mut state = self.state.lock();
        for (policy, value) in figures {
            state
                .history
                .entry(policy.clone())
                .or_default()
                .record(second, *value);
        }
        state.newest = Some(state.newest.map_or(second, |n| n.max(second)));
        state.scope = Some(scope);
        state.instances = instances;
    }

    /// Records the mean latency of the store's calls over the last second, if any was made.
    pub fn record_latency(&self, latency_ms: Option<f64>) {
        self.state.lock().latency_ms = latency_ms;
    }

    /// The store's mean call latency over the last second sampled, in milliseconds.
    pub fn latency_ms(&self) -> Option<f64> {
        self.state.lock().latency_ms
    }

    /// The history as the console reads it: each policy's seconds after `since`, and the
    /// newest second's totals over every policy.
    pub fn json(&self, since: Option<u64>) -> Value {
        let state = self.state.lock();
        let newest = state.newest.unwrap_or(0);
        let mut current = [0u64; 2];
        let policies: Vec<Value> = state
            .history
            .iter()
            .map(|(policy, ring)| {
                let now = ring.at(newest);
                current[0] += now[0];
                current[1] += now[1];
                let (from, values) = ring.since(since);
                let (allowed, throttled): (Vec<u64>, Vec<u64>) =
                    values.iter().map(|v| (v[0], v[1])).unzip();
                json!({ "policy": policy, "from": from, "allowed": allowed, "throttled": throttled })
            })
            .collect();
        json!({
            "scope": match state.scope { Some(Scope::Fleet) => "fleet", _ => "instance" },
            "instances": state.instances.max(1),
            "now": newest,
            "seconds": SECONDS,
            "current": { "allowed": current[0], "throttled": current[1] },
            "policies": policies,
        })
    }
}

/// Where the fleet's figures are shared: the store, and the hash's key.
pub struct FleetShare {
    /// The driver of the Redis store.
    pub redis: Arc<RedisDriver>,
    /// The hash (`<prefix>:console:rates`).
    pub key: String,
    /// This instance's id in it.
    pub id: String,
}

/// The background service that samples every second.
pub struct Sampler {
    rates: Arc<Rates>,
    metrics: Arc<Metrics>,
    fleet: Option<FleetShare>,
    deltas: Mutex<Deltas>,
    latency: Mutex<(f64, u64)>,
    /// What second each sample is filed under.
    clock: Clock,
}

impl Sampler {
    /// A sampler of `metrics` into `rates`, sharing with the fleet through `fleet` if given,
    /// filing each sample under `clock`'s second.
    pub fn new(
        rates: Arc<Rates>,
        metrics: Arc<Metrics>,
        fleet: Option<FleetShare>,
        clock: Clock,
    ) -> Self {
        Self {
            rates,
            metrics,
            fleet,
            deltas: Mutex::new(Deltas::default()),
            latency: Mutex::new((0.0, 0)),
            clock,
        }
    }

    /// One sample, for `second`.
    async fn sample(&self, second: u64) {
        let mine: BTreeMap<String, [u64; 2]> = self
            .deltas
            .lock()
            .of(self.metrics.request_tally())
            .into_iter()
            .collect();
        self.rates.record_latency(self.latency());
        let shared = match &self.fleet {
            Some(fleet) => share(fleet, &mine).await,
            None => None,
        };
        match shared {
            Some((total, instances)) => self.rates.record(second, &total, Scope::Fleet, instances),
            None => self.rates.record(second, &mine, Scope::Instance, 1),
        }
    }

    /// The mean store call latency since the last sample, in ms.
    fn latency(&self) -> Option<f64> {
        let histogram = &self.metrics.store.call_seconds;
        let (sum, count) = (histogram.get_sample_sum(), histogram.get_sample_count());
        let mut last = self.latency.lock();
        let (dsum, dcount) = (sum - last.0, count.saturating_sub(last.1));
        *last = (sum, count);
        (dcount > 0).then(|| dsum / dcount as f64 * 1000.0)
    }
}

/// Shares `mine` and reads the fleet's sum; `None` when Redis did not answer.
async fn share(
    fleet: &FleetShare,
    mine: &BTreeMap<String, [u64; 2]>,
) -> Option<(BTreeMap<String, [u64; 2]>, u32)> {
    let args = [
        fleet.id.clone(),
        serde_json::to_string(mine).ok()?,
        FRESH_MS.to_string(),
    ];
    let keys = [fleet.key.clone()];
    let reply = fleet.redis.eval(SHARE_SCRIPT, &keys, &args).await;
    let lines: Vec<String> = match reply {
        Ok(redis::Value::Array(items)) => items
            .into_iter()
            .filter_map(|item| redis::from_redis_value(item).ok())
            .collect(),
        Ok(_) => return None,
        Err(e) => {
            log::debug!("console: the fleet's rates cannot be shared now: {e}");
            return None;
        }
    };
    Some(fleet::sum(&lines))
}

#[async_trait]
impl BackgroundService for Sampler {
    async fn start(&self, _shutdown: ShutdownWatch) {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            self.sample(self.clock.now_s()).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rates_json_reads_the_newest_second_over_every_policy() {
        let rates = Rates::default();
        let figures = |a, t| BTreeMap::from([("api".to_owned(), [a, t])]);
        rates.record(10, &figures(4, 1), Scope::Instance, 1);
        rates.record(11, &figures(7, 2), Scope::Fleet, 3);
        let login = BTreeMap::from([("login".to_owned(), [1, 1])]);
        rates.record(11, &login, Scope::Fleet, 3);
        let shown = rates.json(None);
        assert_eq!(shown["current"], json!({ "allowed": 8, "throttled": 3 }));
        assert_eq!(shown["scope"], "fleet");
        assert_eq!(shown["instances"], 3);
        assert_eq!(shown["policies"][0]["allowed"], json!([4, 7]));
        assert_eq!(rates.json(Some(10))["policies"][0]["from"], 11);
    }
}
