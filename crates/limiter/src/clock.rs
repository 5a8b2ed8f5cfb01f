//! The proxy's clocks: the one place anything reads the wall clock, and the monotonic clock the
//! memory store decides on. tests/layering.rs checks that no other file reads `SystemTime::now`.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

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

/// The wall clock now: the only read of it in the tree. Logs format it; everything else takes
/// one of the readings below.
pub fn wall_now() -> SystemTime {
    SystemTime::now()
}

/// The wall clock since the Unix epoch (zero for a clock set before it).
fn since_epoch() -> Duration {
    wall_now().duration_since(UNIX_EPOCH).unwrap_or_default()
}

/// The wall clock in microseconds since the Unix epoch (0 for a clock set before it).
pub fn wall_now_us() -> u64 {
    since_epoch().as_micros() as u64
}

/// The wall clock in milliseconds since the Unix epoch: what entries' expiries are kept in.
pub fn wall_now_ms() -> u64 {
    since_epoch().as_millis() as u64
}

/// The wall clock in whole seconds since the Unix epoch: what passes, certificates and
/// once-a-second throttles count in.
pub fn wall_now_s() -> u64 {
    since_epoch().as_secs()
}

/// The wall clock in nanoseconds since the Unix epoch: a seed of last resort.
pub fn wall_now_ns() -> u128 {
    since_epoch().as_nanos()
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}
