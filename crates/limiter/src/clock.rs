//! The proxy's monotonic clock, in microseconds: the only place the memory store reads time.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// A monotonic microsecond clock that starts at the wall clock's reading (Unix microseconds):
/// it never goes back, and calendar periods (quotas) can be told on it. It drifts from the
/// wall clock only by the corrections made to the wall clock while it runs.
#[derive(Debug, Clone, Copy)]
pub struct MonotonicClock {
    epoch: Instant,
    start_us: u64,
}

impl MonotonicClock {
    /// Starts a clock at the wall clock's reading now.
    pub fn new() -> Self {
        Self {
            epoch: Instant::now(),
            start_us: wall_now_us(),
        }
    }

    /// Microseconds since the Unix epoch, as the wall clock said at the clock's creation plus
    /// the monotonic time since.
    pub fn now_us(&self) -> u64 {
        // u64 microseconds last 584,000 years; the cast cannot truncate in practice.
        self.start_us + self.epoch.elapsed().as_micros() as u64
    }
}

/// The wall clock in microseconds since the Unix epoch (0 for a clock set before it).
pub fn wall_now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}
