//! The proxy's monotonic clock, in microseconds: the only place the memory store reads time.

use std::time::Instant;

/// A monotonic microsecond clock counting from its creation.
#[derive(Debug, Clone, Copy)]
pub struct MonotonicClock {
    epoch: Instant,
}

impl MonotonicClock {
    /// Starts a clock at zero now.
    pub fn new() -> Self {
        Self {
            epoch: Instant::now(),
        }
    }

    /// Microseconds since the clock was created.
    pub fn now_us(&self) -> u64 {
        // u64 microseconds last 584,000 years; the cast cannot truncate in practice.
        self.epoch.elapsed().as_micros() as u64
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}
