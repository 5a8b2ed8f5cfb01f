//! Overload protection's series: `floodgate_overload_in_flight{pool}`,
//! `floodgate_overload_limit{pool}`, `floodgate_overload_queued{pool}`,
//! `floodgate_overload_shed_total{pool, priority, action}` and `floodgate_overload_level`.
//! Pools are named by the config, priorities and actions by code: the labels are bounded.

use prometheus::core::Collector;
use prometheus::{IntCounterVec, IntGauge, IntGaugeVec, Opts};

/// The handles of the overload series.
#[derive(Clone)]
pub struct OverloadMetrics {
    /// Requests at each pool's backends now.
    pub in_flight: IntGaugeVec,
    /// Each pool's limit now (this instance's share, or the adaptive limit).
    pub limit: IntGaugeVec,
    /// Requests waiting for a slot now.
    pub queued: IntGaugeVec,
    /// Requests shed (`shed`: 503) or challenged instead (`challenge`), by pool and priority.
    pub shed: IntCounterVec,
    /// The manual switch: 0 `auto` (measuring), 1 `challenge`, 2 `shed`.
    pub level: IntGauge,
}

fn gauge(name: &str, help: &str) -> IntGaugeVec {
    IntGaugeVec::new(Opts::new(name, help), &["pool"]).expect("static metric definition")
}

impl OverloadMetrics {
    pub(super) fn new() -> Self {
        Self {
            in_flight: gauge(
                "floodgate_overload_in_flight",
                "Requests at the pool's backends now, on this instance.",
            ),
            limit: gauge(
                "floodgate_overload_limit",
                "The most requests this instance sends the pool at once: its share of \
                 overload.max_in_flight, or the adaptive limit.",
            ),
            queued: gauge(
                "floodgate_overload_queued",
                "Requests waiting for one of the pool's slots now.",
            ),
            shed: IntCounterVec::new(
                Opts::new(
                    "floodgate_overload_shed_total",
                    "Requests not sent to an overloaded pool: answered 503 (shed) or with the \
                     challenge page (challenge), by the request's priority.",
                ),
                &["pool", "priority", "action"],
            )
            .expect("static metric definition"),
            level: IntGauge::new(
                "floodgate_overload_level",
                "The overload switch: 0 auto (measuring), 1 challenge, 2 shed.",
            )
            .expect("static metric definition"),
        }
    }

    pub(super) fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![
            Box::new(self.in_flight.clone()),
            Box::new(self.limit.clone()),
            Box::new(self.queued.clone()),
            Box::new(self.shed.clone()),
            Box::new(self.level.clone()),
        ]
    }
}
