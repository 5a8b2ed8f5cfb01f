//! Proven credentials: `floodgate_identity_proof_total{source, state}`, a request counted once
//! per verified source it carried, by what was known of the value (`proven`, `unproven`,
//! `refused`). `source` is a source as the config writes it: a bounded label.

use crate::identity::ProofState;
use prometheus::core::Collector;
use prometheus::{IntCounter, IntCounterVec, Opts};

/// The series of proven credentials.
#[derive(Clone)]
pub struct ProofCounters {
    vec: IntCounterVec,
}

/// One verified source's counters, by state ([`ProofState::ALL`]'s order).
#[derive(Clone)]
pub struct SourceProofCounters([IntCounter; 3]);

impl ProofCounters {
    pub(super) fn new() -> Self {
        let opts = Opts::new(
            "floodgate_identity_proof_total",
            "Requests carrying a value of a verified source ([identity.verify]), by source and \
             by what was known of the value: proven, unproven or refused.",
        );
        Self {
            vec: IntCounterVec::new(opts, &["source", "state"]).expect("static metric definition"),
        }
    }

    /// The counters of `source`, created at zero so they show before its first request.
    pub fn source(&self, source: &str) -> SourceProofCounters {
        SourceProofCounters(
            ProofState::ALL.map(|state| self.vec.with_label_values(&[source, state.word()])),
        )
    }

    pub(super) fn collector(&self) -> Box<dyn Collector> {
        Box::new(self.vec.clone())
    }
}

impl SourceProofCounters {
    /// Counts a request whose value was in `state`.
    pub fn count(&self, state: ProofState) {
        let index = ProofState::ALL
            .iter()
            .position(|s| *s == state)
            .unwrap_or(0);
        self.0[index].inc();
    }
}

impl Default for ProofCounters {
    /// Handles registered nowhere (for tests and benchmarks).
    fn default() -> Self {
        Self::new()
    }
}
