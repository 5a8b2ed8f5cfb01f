//! The proxy's clocks: the limiter crate's monotonic microsecond clock and its wall clock, and
//! [`Clock`], the wall clock everything that decides, expires or records by time is handed
//! (the system's, or one a test sets and moves, so expiry is tested without waiting);
//! [`monotonic_s`] for once-a-second throttles. tests/layering.rs refuses any other read of
//! the wall clock (see "One clock" in docs/src/design.md).

pub use floodgate_limiter::clock::{
    wall_now, wall_now_ms, wall_now_ns, wall_now_s, wall_now_us, MonotonicClock,
};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A wall clock in Unix milliseconds.
#[derive(Debug, Clone, Default)]
pub enum Clock {
    /// The system's.
    #[default]
    System,
    /// One standing where it was set, moved only by [`Clock::advance`] (shared by its
    /// clones).
    Set(Arc<AtomicU64>),
}

impl Clock {
    /// A clock standing at `ms` (Unix milliseconds) until moved.
    pub fn set_at(ms: u64) -> Self {
        Self::Set(Arc::new(AtomicU64::new(ms)))
    }

    /// Moves a set clock (and its clones) `ms` forward; the system's cannot be moved.
    pub fn advance(&self, ms: u64) {
        if let Self::Set(now) = self {
            now.fetch_add(ms, Ordering::Relaxed);
        }
    }

    /// The time, in Unix milliseconds.
    pub fn now_ms(&self) -> u64 {
        match self {
            Self::System => wall_now_ms(),
            Self::Set(now) => now.load(Ordering::Relaxed),
        }
    }

    /// The time, in whole Unix seconds.
    pub fn now_s(&self) -> u64 {
        self.now_ms() / 1000
    }

    /// The time, as a `SystemTime` (a set clock's, to the millisecond).
    pub fn now(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_micros(self.now_us())
    }

    /// The time, in Unix microseconds (a set clock's, to the millisecond).
    pub fn now_us(&self) -> u64 {
        match self {
            Self::System => wall_now_us(),
            Self::Set(now) => now.load(Ordering::Relaxed).saturating_mul(1000),
        }
    }
}

/// Whole seconds on the monotonic clock since the process first asked, from 1 (so a throttle's
/// zeroed "last second" never matches): what once-a-second throttles of log lines and of
/// fleet asks count in. No decision, expiry or record reads it; those read a [`Clock`].
pub fn monotonic_s() -> u64 {
    static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);
    EPOCH.elapsed().as_secs() + 1
}
