//! A warning said at most once a minute: a collector that is down must not flood the log.

use std::time::{Duration, Instant};

/// How often the export failure is said at most.
const EVERY: Duration = Duration::from_secs(60);

/// When the warning was last said.
#[derive(Debug, Default)]
pub(super) struct Seldom {
    last: Option<Instant>,
}

impl Seldom {
    /// Whether a warning at `now` is said (and then counts as the last one).
    pub(super) fn may_say(&mut self, now: Instant) -> bool {
        let due = self
            .last
            .is_none_or(|last| now.duration_since(last) >= EVERY);
        if due {
            self.last = Some(now);
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warning_is_said_at_most_once_a_minute() {
        let start = Instant::now();
        let mut seldom = Seldom::default();
        assert!(seldom.may_say(start));
        assert!(!seldom.may_say(start + Duration::from_secs(1)));
        assert!(!seldom.may_say(start + Duration::from_secs(59)));
        assert!(seldom.may_say(start + Duration::from_secs(60)));
        assert!(!seldom.may_say(start + Duration::from_secs(61)));
    }
}
