//! The CrowdSec bouncer's series: decisions held, pulls by result, and the age of the last
//! successful pull (the fleet's, on the Redis store).

use super::counters::ByLabel;
use super::vocab::PullResult;
use prometheus::core::Collector;
use prometheus::{Gauge, IntGauge};

/// The CrowdSec bouncer's series.
#[derive(Clone)]
pub struct CrowdSecMetrics {
    /// Decisions this instance applies.
    pub decisions: IntGauge,
    /// Pulls of the decision stream, by result.
    pub pulls: ByLabel<PullResult>,
    /// Seconds since decisions were last pulled from LAPI.
    pub last_pull_age: Gauge,
}

impl CrowdSecMetrics {
    pub(super) fn new() -> Self {
        Self {
            decisions: IntGauge::new(
                "floodgate_crowdsec_decisions",
                "CrowdSec decisions (addresses and ranges) this instance applies.",
            )
            .expect("static metric definition"),
            pulls: ByLabel::new(
                "floodgate_crowdsec_pulls_total",
                "Pulls of CrowdSec's decision stream by this instance, by result.",
                "result",
            ),
            last_pull_age: Gauge::new(
                "floodgate_crowdsec_last_pull_age_seconds",
                "Seconds since CrowdSec's decisions were last pulled (by any instance of the fleet on the Redis store).",
            )
            .expect("static metric definition"),
        }
    }

    pub(super) fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![
            Box::new(self.decisions.clone()),
            self.pulls.collector(),
            Box::new(self.last_pull_age.clone()),
        ]
    }
}
