//! `[decisions]`: how many decisions each instance keeps to explain, and for how long.

use std::time::Duration;

/// The default `keep`.
pub const DEFAULT_KEEP: usize = 10_000;
/// The default `max_age`.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(15 * 60);

/// How decisions are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecisionSettings {
    /// The most records an instance keeps (0: none).
    pub keep: usize,
    /// How long a record is found (in the ring and on the fleet's shelf).
    pub max_age: Duration,
}

impl DecisionSettings {
    /// `max_age` in milliseconds.
    pub fn max_age_ms(&self) -> u64 {
        u64::try_from(self.max_age.as_millis()).unwrap_or(u64::MAX)
    }
}

impl Default for DecisionSettings {
    fn default() -> Self {
        Self {
            keep: DEFAULT_KEEP,
            max_age: DEFAULT_MAX_AGE,
        }
    }
}
