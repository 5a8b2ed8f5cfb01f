//! When a background task's failures and recoveries are logged (CrowdSec's bouncer, the
//! backend's robots.txt): a failure at most once a minute, across outages (a LAPI that flaps
//! every few seconds logs one failure a minute, not one per outage), saying how many were held
//! back; a recovery once after each failure logged, so the log never ends on a failure that is
//! over. Time is passed in: an `Instant`, or Unix milliseconds read from a
//! [`Clock`](crate::clock::Clock) (a test moves it).

use std::time::{Duration, Instant};

/// How often a failure is logged, at most.
pub const LOG_EVERY: Duration = Duration::from_secs(60);

/// Whether a failure is logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Say {
    /// Log it, with how many failures since the last one logged were not.
    Warn {
        /// Failures held back since the last logged.
        held_back: u32,
    },
    /// Hold it back: a failure was logged within the minute.
    Quiet,
}

/// A point in time failures are told apart by.
pub trait Moment: Copy {
    /// How long after `earlier` this is (zero if it is not after).
    fn since(self, earlier: Self) -> Duration;
}

impl Moment for Instant {
    fn since(self, earlier: Self) -> Duration {
        self.saturating_duration_since(earlier)
    }
}

/// Unix milliseconds, as [`Clock::now_ms`](crate::clock::Clock::now_ms) reads them.
impl Moment for u64 {
    fn since(self, earlier: Self) -> Duration {
        Duration::from_millis(self.saturating_sub(earlier))
    }
}

/// The log's memory of failures, kept across outages, told apart by `T`.
#[derive(Debug)]
pub struct Complaints<T = Instant> {
    /// When a failure was last logged.
    last: Option<T>,
    held_back: u32,
    /// A failure was logged and no recovery since.
    unresolved: bool,
}

impl<T> Default for Complaints<T> {
    fn default() -> Self {
        Self {
            last: None,
            held_back: 0,
            unresolved: false,
        }
    }
}

impl<T: Moment> Complaints<T> {
    /// Whether a failure at `now` is logged.
    pub fn failure(&mut self, now: T) -> Say {
        if self.last.is_some_and(|at| now.since(at) < LOG_EVERY) {
            self.held_back = self.held_back.saturating_add(1);
            return Say::Quiet;
        }
        self.last = Some(now);
        self.unresolved = true;
        Say::Warn {
            held_back: std::mem::take(&mut self.held_back),
        }
    }

    /// Whether a recovery is logged: the first after a failure was logged.
    pub fn recovery(&mut self) -> bool {
        std::mem::take(&mut self.unresolved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flapping_lapi_logs_a_failure_and_a_recovery_a_minute() {
        let start = Instant::now();
        let at = |s: u64| start + Duration::from_secs(s);
        let mut c = Complaints::default();
        let mut logged = Vec::new();
        // Down for 2 s, up for 2 s, for three minutes.
        for s in (0..180).step_by(4) {
            if let Say::Warn { held_back } = c.failure(at(s)) {
                logged.push(format!("{s}: failure ({held_back} held back)"));
            }
            if c.recovery() {
                logged.push(format!("{}: recovery", s + 2));
            }
        }
        assert_eq!(
            logged,
            [
                "0: failure (0 held back)",
                "2: recovery",
                "60: failure (14 held back)",
                "62: recovery",
                "120: failure (14 held back)",
                "122: recovery",
            ]
        );
    }

    #[test]
    fn a_long_outage_logs_once_a_minute_and_its_end_once() {
        let start = Instant::now();
        let mut c = Complaints::default();
        let said: Vec<Say> = (0..13)
            .map(|i| c.failure(start + Duration::from_secs(10 * i)))
            .collect();
        let logged = said.iter().filter(|s| **s != Say::Quiet).count();
        assert_eq!(logged, 3, "at 0, 60 and 120 s: {said:?}");
        assert_eq!(said[6], Say::Warn { held_back: 5 });
        assert!(c.recovery(), "the end of the outage is logged");
        assert!(!c.recovery(), "once");
        assert!(
            !Complaints::<Instant>::default().recovery(),
            "nothing to recover from"
        );
    }

    #[test]
    fn milliseconds_from_a_clock_count_as_well() {
        let mut c = Complaints::<u64>::default();
        assert_eq!(c.failure(1_000), Say::Warn { held_back: 0 });
        assert_eq!(c.failure(60_999), Say::Quiet);
        assert_eq!(c.failure(61_000), Say::Warn { held_back: 1 });
        assert_eq!(
            c.failure(500),
            Say::Quiet,
            "a clock set back says nothing twice"
        );
    }
}
