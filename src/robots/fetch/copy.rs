//! What Floodgate holds of one host's robots.txt, and the rule that keeps it (RFC 9309
//! §2.3.1): a file read replaces the copy; a 4xx means no rules; while the file cannot be
//! read, the last copy stays for up to [`KEPT_FOR`] after it was read, then nothing is
//! enforced; before any copy, nothing is. Time is passed in.

use super::Fetched;
use bytes::Bytes;
use std::time::Duration;

/// How long the last copy stays in force while the file cannot be read (RFC 9309 §2.3.1.4:
/// a cached copy is not used for more than 24 hours past its time).
pub const KEPT_FOR: Duration = Duration::from_secs(24 * 60 * 60);

/// What Floodgate enforces for one host.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum RobotsCopy {
    /// No copy: none read yet, or the last one is older than [`KEPT_FOR`] and the file
    /// cannot be read. Nothing is enforced.
    #[default]
    NoCopy,
    /// The backend answered 4xx: there are no rules, everything is allowed.
    NoRules {
        /// When the answer came (Unix milliseconds).
        fetched_at_ms: u64,
    },
    /// The backend's file (at most [`MAX_BODY`](super::MAX_BODY) bytes of it), to be parsed.
    Rules {
        /// The file as read: any bytes, not necessarily UTF-8.
        body: Bytes,
        /// When it was read (Unix milliseconds).
        fetched_at_ms: u64,
    },
}

impl RobotsCopy {
    /// The copy after `fetched` came at `now_ms`: the keeper's rule.
    pub fn next(&self, fetched: Fetched, now_ms: u64) -> RobotsCopy {
        match fetched {
            Fetched::Rules(body) => RobotsCopy::Rules {
                body,
                fetched_at_ms: now_ms,
            },
            Fetched::NoRules => RobotsCopy::NoRules {
                fetched_at_ms: now_ms,
            },
            Fetched::Unavailable(_) if self.is_fresh(now_ms) => self.clone(),
            Fetched::Unavailable(_) => RobotsCopy::NoCopy,
        }
    }

    /// The file to enforce, if there is one.
    pub fn rules(&self) -> Option<&Bytes> {
        match self {
            RobotsCopy::Rules { body, .. } => Some(body),
            RobotsCopy::NoCopy | RobotsCopy::NoRules { .. } => None,
        }
    }

    /// When the copy was read, if there is one.
    pub fn fetched_at_ms(&self) -> Option<u64> {
        match self {
            RobotsCopy::NoCopy => None,
            RobotsCopy::NoRules { fetched_at_ms } | RobotsCopy::Rules { fetched_at_ms, .. } => {
                Some(*fetched_at_ms)
            }
        }
    }

    /// Whether `self` and `other` enforce the same thing, whenever each was read.
    pub fn same_rules(&self, other: &RobotsCopy) -> bool {
        match (self, other) {
            (RobotsCopy::NoCopy, RobotsCopy::NoCopy) => true,
            (RobotsCopy::NoRules { .. }, RobotsCopy::NoRules { .. }) => true,
            (RobotsCopy::Rules { body: a, .. }, RobotsCopy::Rules { body: b, .. }) => a == b,
            _ => false,
        }
    }

    /// Whether the copy may still be enforced at `now_ms` without a new answer (a clock
    /// that went back counts as no time passed).
    fn is_fresh(&self, now_ms: u64) -> bool {
        self.fetched_at_ms()
            .is_some_and(|at| now_ms.saturating_sub(at) < KEPT_FOR.as_millis() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Unavailable;
    use super::*;

    const DAY_MS: u64 = 24 * 60 * 60 * 1000;
    const T0: u64 = 1_700_000_000_000;

    fn rules(body: &'static str, at: u64) -> RobotsCopy {
        RobotsCopy::Rules {
            body: Bytes::from_static(body.as_bytes()),
            fetched_at_ms: at,
        }
    }

    fn down() -> Fetched {
        Fetched::Unavailable(Unavailable::Status(503))
    }

    #[test]
    fn a_file_read_replaces_whatever_was_held() {
        let file = || Fetched::Rules(Bytes::from_static(b"User-agent: *\nDisallow: /b\n"));
        let after = rules("User-agent: *\nDisallow: /b\n", T0 + 5);
        for before in [
            RobotsCopy::NoCopy,
            RobotsCopy::NoRules { fetched_at_ms: T0 },
            rules("User-agent: *\nDisallow: /a\n", T0),
        ] {
            assert_eq!(before.next(file(), T0 + 5), after, "from {before:?}");
        }
    }

    #[test]
    fn a_4xx_means_no_rules_even_over_a_good_copy() {
        let after = rules("Disallow: /", T0).next(Fetched::NoRules, T0 + 1);
        assert_eq!(
            after,
            RobotsCopy::NoRules {
                fetched_at_ms: T0 + 1
            }
        );
        assert_eq!(after.rules(), None);
    }

    #[test]
    fn an_unavailable_file_keeps_the_last_copy_for_24_hours_then_nothing() {
        let held = rules("Disallow: /", T0);
        assert_eq!(held.next(down(), T0 + 1), held);
        assert_eq!(
            held.next(down(), T0 + DAY_MS - 1),
            held,
            "as read, not re-dated"
        );
        assert_eq!(held.next(down(), T0 + DAY_MS), RobotsCopy::NoCopy);
        let no_rules = RobotsCopy::NoRules { fetched_at_ms: T0 };
        assert_eq!(no_rules.next(down(), T0 + DAY_MS - 1), no_rules);
        assert_eq!(no_rules.next(down(), T0 + 2 * DAY_MS), RobotsCopy::NoCopy);
    }

    #[test]
    fn nothing_is_enforced_before_the_first_copy() {
        let timeout = Fetched::Unavailable(Unavailable::Timeout);
        assert_eq!(RobotsCopy::NoCopy.next(timeout, T0), RobotsCopy::NoCopy);
        assert_eq!(RobotsCopy::default().rules(), None);
    }

    #[test]
    fn a_clock_that_went_back_keeps_the_copy() {
        let held = rules("Disallow: /", T0);
        assert_eq!(held.next(down(), T0 - DAY_MS), held);
    }

    #[test]
    fn the_same_rules_whenever_read() {
        assert!(rules("a", T0).same_rules(&rules("a", T0 + 9)));
        assert!(!rules("a", T0).same_rules(&rules("b", T0)));
        let none = RobotsCopy::NoRules { fetched_at_ms: T0 };
        assert!(none.same_rules(&RobotsCopy::NoRules { fetched_at_ms: 1 }));
        assert!(!none.same_rules(&RobotsCopy::NoCopy));
        assert!(!RobotsCopy::NoCopy.same_rules(&rules("", T0)));
    }
}
