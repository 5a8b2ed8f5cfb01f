//! A circuit breaker: after enough consecutive failures, stop waiting on the store until a
//! background probe sees it answer again.

use prometheus::IntGauge;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Counts consecutive failures and opens at a threshold.
pub struct Breaker {
    failures: AtomicU32,
    open: AtomicBool,
    threshold: u32,
    open_gauge: IntGauge,
}

impl Breaker {
    /// A closed breaker that opens after `threshold` consecutive failures, mirrored in
    /// `open_gauge` (1 while open).
    pub fn new(threshold: u32, open_gauge: IntGauge) -> Self {
        open_gauge.set(0);
        Self {
            failures: AtomicU32::new(0),
            open: AtomicBool::new(false),
            threshold: threshold.max(1),
            open_gauge,
        }
    }

    /// Whether calls should skip the store.
    pub fn is_open(&self) -> bool {
        self.open.load(Ordering::Relaxed)
    }

    /// A call succeeded: the failure streak ends.
    pub fn record_success(&self) {
        // Read first so that the common case writes nothing to a shared cache line.
        if self.failures.load(Ordering::Relaxed) != 0 {
            self.failures.store(0, Ordering::Relaxed);
        }
    }

    /// A call failed. Returns true for the one failure that opened the breaker, whose caller
    /// starts the probe.
    pub fn record_failure(&self) -> bool {
        let streak = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
        if streak >= self.threshold && !self.open.swap(true, Ordering::AcqRel) {
            self.open_gauge.set(1);
            return true;
        }
        false
    }

    /// The probe saw the store answer: calls go to it again.
    pub fn close(&self) {
        self.failures.store(0, Ordering::Relaxed);
        self.open.store(false, Ordering::Release);
        self.open_gauge.set(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_once_after_the_threshold_and_closes_on_demand() {
        let gauge = IntGauge::new("g", "g").unwrap();
        let breaker = Breaker::new(3, gauge.clone());
        assert!(!breaker.record_failure());
        breaker.record_success();
        assert!(!breaker.record_failure());
        assert!(!breaker.record_failure());
        assert!(breaker.record_failure(), "the third in a row opens it");
        assert!(!breaker.record_failure(), "only one caller is told");
        assert!(breaker.is_open());
        assert_eq!(gauge.get(), 1);
        breaker.close();
        assert!(!breaker.is_open());
        assert_eq!(gauge.get(), 0);
    }
}
