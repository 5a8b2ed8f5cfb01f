//! Challenges shown and how they ended: `floodgate_challenges_total{policy, kind, result}`.
//! `policy` is the policy that asked (`crowdsec` for a `captcha` decision, `unknown` for a
//! solution whose nonce did not open), `kind` `refresh` or `pow` (`unknown` likewise).

use prometheus::core::Collector;
use prometheus::{IntCounterVec, Opts};

/// How a challenge ended (`result`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChallengeResult {
    /// A challenge page was served.
    Issued,
    /// A solution earned a pass.
    Passed,
    /// A solution was refused: wrong, stale, replayed, forged or from another network.
    Failed,
}

impl ChallengeResult {
    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            Self::Issued => "issued",
            Self::Passed => "passed",
            Self::Failed => "failed",
        }
    }
}

/// The handle of `floodgate_challenges_total` (labelled by policy names from the config, so
/// bounded).
#[derive(Clone)]
pub struct ChallengeMetrics {
    family: IntCounterVec,
}

impl ChallengeMetrics {
    pub(super) fn new() -> Self {
        let family = IntCounterVec::new(
            Opts::new(
                "floodgate_challenges_total",
                "Challenge pages served (issued) and solutions received (passed: a pass was \
                 given; failed: refused), by the policy that asked and the challenge's kind.",
            ),
            &["policy", "kind", "result"],
        )
        .expect("static metric definition");
        Self { family }
    }

    /// Counts one challenge of `policy` and `kind` ending in `result`.
    pub fn count(&self, policy: &str, kind: &str, result: ChallengeResult) {
        self.family
            .with_label_values(&[policy, kind, result.label()])
            .inc();
    }

    /// Challenges issued and passed so far on this instance, every policy and kind summed.
    pub fn totals(&self) -> (u64, u64) {
        let (mut issued, mut passed) = (0, 0);
        for family in self.family.collect() {
            for metric in family.get_metric() {
                let result = metric.get_label().iter().find(|l| l.name() == "result");
                let value = metric.get_counter().get_value() as u64;
                let result = result.map(|l| l.value());
                if result == Some(ChallengeResult::Issued.label()) {
                    issued += value;
                } else if result == Some(ChallengeResult::Passed.label()) {
                    passed += value;
                }
            }
        }
        (issued, passed)
    }

    pub(super) fn collector(&self) -> Box<dyn Collector> {
        Box::new(self.family.clone())
    }
}
