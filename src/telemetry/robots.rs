//! robots.txt: `floodgate_robots_requests_total{crawler, verdict}`, a crawler's request counted
//! by what its group of the site's robots.txt said of the path (`allowed`, `disallowed`), and
//! `floodgate_robots_trap_total{result}`, the requests for the trap (`banned`: caught;
//! `spared`: a browser, a search engine, an address that never read the file, or a check that
//! could not finish). `crawler` is a group's token or a catalogue crawler's name: bounded by the
//! catalogue and the file's groups.

use crate::identity::RobotsVerdict;
use prometheus::core::Collector;
use prometheus::{IntCounterVec, Opts};

/// What a request for the trap came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrapResult {
    /// Caught: banned for `trap_ban`.
    Banned,
    /// Answered 404 and let go.
    Spared,
}

impl TrapResult {
    /// The `result` label.
    pub fn word(self) -> &'static str {
        match self {
            Self::Banned => "banned",
            Self::Spared => "spared",
        }
    }
}

/// The series of robots.txt's enforcement.
#[derive(Clone)]
pub struct RobotsCounters {
    requests: IntCounterVec,
    trap: IntCounterVec,
}

impl RobotsCounters {
    pub(super) fn new() -> Self {
        let requests = Opts::new(
            "floodgate_robots_requests_total",
            "Crawlers' requests, by crawler and by what the site's robots.txt says of the path: \
             allowed or disallowed.",
        );
        let trap = Opts::new(
            "floodgate_robots_trap_total",
            "Requests for the robots.txt trap, by result: banned or spared.",
        );
        let trap = IntCounterVec::new(trap, &["result"]).expect("static metric definition");
        for result in [TrapResult::Banned, TrapResult::Spared] {
            trap.with_label_values(&[result.word()]);
        }
        Self {
            requests: IntCounterVec::new(requests, &["crawler", "verdict"])
                .expect("static metric definition"),
            trap,
        }
    }

    /// Counts a request of `crawler` given `verdict`.
    pub fn request(&self, crawler: &str, verdict: RobotsVerdict) {
        self.requests
            .with_label_values(&[crawler, verdict.word()])
            .inc();
    }

    /// Counts a request for the trap that came to `result`.
    pub fn trap(&self, result: TrapResult) {
        self.trap.with_label_values(&[result.word()]).inc();
    }

    pub(super) fn collectors(&self) -> [Box<dyn Collector>; 2] {
        [Box::new(self.requests.clone()), Box::new(self.trap.clone())]
    }
}

impl Default for RobotsCounters {
    /// Handles registered nowhere (for tests and benchmarks).
    fn default() -> Self {
        Self::new()
    }
}
