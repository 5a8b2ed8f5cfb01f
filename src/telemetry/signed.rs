//! Signed agents (Web Bot Auth): `floodgate_signed_requests_total{result}` and
//! `floodgate_signed_directory_fetches_total{result}`.

use super::counters::ByLabel;
use super::vocab::{FetchResult, SignedResult};
use prometheus::core::Collector;

/// The handles of the signed agents' series.
#[derive(Clone)]
pub struct SignedMetrics {
    /// Signed requests by how their signature fared.
    pub requests: ByLabel<SignedResult>,
    /// Fetches of agents' key directories by result.
    pub fetches: ByLabel<FetchResult>,
}

impl SignedMetrics {
    pub(super) fn new() -> Self {
        Self {
            requests: ByLabel::new(
                "floodgate_signed_requests_total",
                "Requests signed for Web Bot Auth, by how the signature fared: verified, failed \
                 (wrong, expired, from the future or replayed) or unfinished (the agent's keys \
                 unknown yet).",
                "result",
            ),
            fetches: ByLabel::new(
                "floodgate_signed_directory_fetches_total",
                "Fetches of signed agents' key directories, by result.",
                "result",
            ),
        }
    }

    pub(super) fn collectors(&self) -> [Box<dyn Collector>; 2] {
        [self.requests.collector(), self.fetches.collector()]
    }
}

impl Default for SignedMetrics {
    /// Handles registered nowhere (for tests and benchmarks).
    fn default() -> Self {
        Self::new()
    }
}
