//! Privacy Pass: `floodgate_privacy_pass_total{issuer, result}`, a token presented at the
//! challenge counted by its issuer (`unknown` before its key is found) and what it came to
//! (`redeemed`, `replayed`, `invalid`, `unknown_key`, `unavailable`: the spent set could not
//! answer). `issuer` is an issuer of `[challenge.privacy_pass]`: a bounded label.

use prometheus::core::Collector;
use prometheus::{IntCounterVec, Opts};

/// The issuer label of a token whose issuer is not known.
pub const UNKNOWN_ISSUER: &str = "unknown";

/// The series of Privacy Pass tokens.
#[derive(Clone)]
pub struct PrivacyPassCounters {
    vec: IntCounterVec,
}

impl PrivacyPassCounters {
    pub(super) fn new() -> Self {
        let opts = Opts::new(
            "floodgate_privacy_pass_total",
            "Privacy Pass tokens presented at the challenge, by issuer and by result: redeemed, \
             replayed, invalid, unknown_key, unavailable.",
        );
        Self {
            vec: IntCounterVec::new(opts, &["issuer", "result"]).expect("static metric definition"),
        }
    }

    /// Counts a token of `issuer` (none: not known) that came to `result`.
    pub fn count(&self, issuer: Option<&str>, result: &str) {
        let issuer = issuer.unwrap_or(UNKNOWN_ISSUER);
        self.vec.with_label_values(&[issuer, result]).inc();
    }

    /// Shows `issuer`'s redeemed tokens at zero before its first.
    pub fn show(&self, issuer: &str) {
        self.vec.with_label_values(&[issuer, "redeemed"]);
    }

    pub(super) fn collector(&self) -> Box<dyn Collector> {
        Box::new(self.vec.clone())
    }
}

impl Default for PrivacyPassCounters {
    /// Handles registered nowhere (for tests and benchmarks).
    fn default() -> Self {
        Self::new()
    }
}
