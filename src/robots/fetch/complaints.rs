//! When a host's failing robots.txt is logged: a failure at most once every [`WARN_EVERY`]
//! (saying how many were held back), a recovery once after a failure was logged. And when the
//! next fetch is due. Time is passed in.

use std::time::{Duration, Instant};

/// How often one host's failures are logged, at most.
pub const WARN_EVERY: Duration = Duration::from_secs(60);

/// How soon a failed fetch is tried again, at most (sooner if `refresh` is shorter), so a
/// backend that was down when Floodgate started does not leave its site without rules for a
/// whole `refresh`.
pub const RETRY_AFTER: Duration = Duration::from_secs(60);

/// Whether a failure is logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Say {
    /// Log it, with how many failures since the last one logged were not.
    Warn {
        /// Failures held back since the last logged.
        held_back: u32,
    },
    /// Hold it back: one was logged within [`WARN_EVERY`].
    Quiet,
}

/// One host's memory of its logged failures.
#[derive(Debug, Default)]
pub(super) struct Complaints {
    last: Option<Instant>,
    held_back: u32,
    unresolved: bool,
}

impl Complaints {
    /// Whether a failure at `now` is logged.
    pub(super) fn failure(&mut self, now: Instant) -> Say {
        if self
            .last
            .is_some_and(|at| now.saturating_duration_since(at) < WARN_EVERY)
        {
            self.held_back = self.held_back.saturating_add(1);
            return Say::Quiet;
        }
        self.last = Some(now);
        self.unresolved = true;
        Say::Warn {
            held_back: std::mem::take(&mut self.held_back),
        }
    }

    /// Whether a success is logged: the first after a logged failure.
    pub(super) fn recovery(&mut self) -> bool {
        std::mem::take(&mut self.unresolved)
    }
}

/// How long after a fetch the next one starts.
pub(super) fn next_fetch_in(failed: bool, refresh: Duration) -> Duration {
    if failed {
        refresh.min(RETRY_AFTER)
    } else {
        refresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_outage_warns_once_a_minute_and_its_end_once() {
        let start = Instant::now();
        let mut c = Complaints::default();
        let said: Vec<Say> = (0..13)
            .map(|i| c.failure(start + Duration::from_secs(10 * i)))
            .collect();
        let warned: Vec<usize> = (0..said.len()).filter(|&i| said[i] != Say::Quiet).collect();
        assert_eq!(warned, [0, 6, 12], "at 0, 60 and 120 s: {said:?}");
        assert_eq!(said[6], Say::Warn { held_back: 5 });
        assert!(c.recovery(), "the end of the outage is logged");
        assert!(!c.recovery(), "once");
        assert!(!Complaints::default().recovery(), "nothing to recover from");
    }

    #[test]
    fn a_failed_fetch_is_tried_again_within_a_minute() {
        let hour = Duration::from_secs(3600);
        assert_eq!(next_fetch_in(false, hour), hour);
        assert_eq!(next_fetch_in(true, hour), RETRY_AFTER);
        let second = Duration::from_secs(1);
        assert_eq!(next_fetch_in(true, second), second);
    }
}
