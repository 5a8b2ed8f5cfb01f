//! Passive ejection: a backend whose requests fail `eject_after` times in a row (connect
//! failures, timeouts, 5xx answers) is left out of the rotation for `eject_for`, then comes
//! back by itself. Time is passed in (milliseconds of the pool's clock), so tests are exact.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// When a backend is ejected and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct EjectRule {
    /// Consecutive failures that eject; 0 never ejects.
    pub(super) after: u32,
    /// Milliseconds an ejection lasts.
    pub(super) for_ms: u64,
}

/// One backend address's recent failures and, while ejected, when it comes back.
#[derive(Debug, Default)]
pub(super) struct Ejection {
    failures: AtomicU32,
    /// The pool-clock millisecond the ejection ends; 0 when never ejected.
    until_ms: AtomicU64,
}

impl Ejection {
    /// Whether the backend is out of the rotation at `now_ms`.
    pub(super) fn is_ejected(&self, now_ms: u64) -> bool {
        self.until_ms.load(Relaxed) > now_ms
    }

    /// Counts a failed request at `now_ms`; true when this failure ejects the backend.
    pub(super) fn failed(&self, rule: EjectRule, now_ms: u64) -> bool {
        if rule.after == 0 {
            return false;
        }
        let failures = self.failures.fetch_add(1, Relaxed) + 1;
        if failures < rule.after {
            return false;
        }
        // The count starts over: once back, the backend needs `after` new failures to leave.
        self.failures.store(0, Relaxed);
        self.until_ms.store(now_ms + rule.for_ms, Relaxed);
        true
    }

    /// Counts a good answer: the failures are no longer consecutive. An ejection under way
    /// still runs its course (a backend failing every other request stays out its time).
    pub(super) fn succeeded(&self) {
        if self.failures.load(Relaxed) != 0 {
            self.failures.store(0, Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: EjectRule = EjectRule {
        after: 3,
        for_ms: 10_000,
    };

    #[test]
    fn consecutive_failures_eject_for_a_while() {
        let e = Ejection::default();
        assert!(!e.failed(RULE, 0));
        assert!(!e.failed(RULE, 1));
        assert!(e.failed(RULE, 2), "the third failure in a row ejects");
        assert!(e.is_ejected(2) && e.is_ejected(10_001));
        assert!(!e.is_ejected(10_002), "back after eject_for");
        assert!(!e.failed(RULE, 10_003), "the count started over");
    }

    #[test]
    fn a_good_answer_breaks_the_run() {
        let e = Ejection::default();
        e.failed(RULE, 0);
        e.failed(RULE, 0);
        e.succeeded();
        assert!(!e.failed(RULE, 0));
        assert!(!e.is_ejected(0));
    }

    #[test]
    fn zero_never_ejects() {
        let e = Ejection::default();
        let off = EjectRule { after: 0, ..RULE };
        for t in 0..10 {
            assert!(!e.failed(off, t));
        }
        assert!(!e.is_ejected(0));
    }
}
