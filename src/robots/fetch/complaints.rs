//! When a host's next robots.txt fetch is due; its failures are logged as
//! [`crate::telemetry::Complaints`] say (at most once a minute, a recovery once). Time is
//! passed in.

use std::time::Duration;

/// How often one host's failures are logged, at most.
pub const WARN_EVERY: Duration = crate::telemetry::LOG_EVERY;

/// How soon a failed fetch is tried again, at most (sooner if `refresh` is shorter), so a
/// backend that was down when Floodgate started does not leave its site without rules for a
/// whole `refresh`.
pub const RETRY_AFTER: Duration = Duration::from_secs(60);

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
    fn a_failed_fetch_is_tried_again_within_a_minute() {
        let hour = Duration::from_secs(3600);
        assert_eq!(next_fetch_in(false, hour), hour);
        assert_eq!(next_fetch_in(true, hour), RETRY_AFTER);
        let second = Duration::from_secs(1);
        assert_eq!(next_fetch_in(true, second), second);
    }
}
