//! How many instances share the store's buckets: pinned by `store.fleet_size`, or learned from
//! the instances that announce themselves in Redis. The local fallback divides by it, so that
//! N instances deciding alone still admit about one limit together.

use prometheus::IntGauge;
use std::sync::atomic::{AtomicU32, Ordering};

/// The fleet's size as this instance knows it.
pub struct FleetSize {
    pinned: Option<u32>,
    learned: AtomicU32,
    gauge: IntGauge,
}

impl FleetSize {
    /// A fleet of `pinned` instances, or (when `None`) of one until a count is learned;
    /// reported in `gauge`.
    pub fn new(pinned: Option<u32>, gauge: IntGauge) -> Self {
        let start = pinned.unwrap_or(1).max(1);
        gauge.set(i64::from(start));
        Self {
            pinned,
            learned: AtomicU32::new(start),
            gauge,
        }
    }

    /// The instance count in use (at least 1).
    pub fn get(&self) -> u32 {
        self.learned.load(Ordering::Relaxed).max(1)
    }

    /// Whether the count is pinned by configuration (nothing to learn).
    pub fn is_pinned(&self) -> bool {
        self.pinned.is_some()
    }

    /// Takes a count of live instances read from the store (ignored when pinned).
    pub fn learn(&self, alive: u32) {
        if self.pinned.is_none() {
            let alive = alive.max(1);
            self.learned.store(alive, Ordering::Relaxed);
            self.gauge.set(i64::from(alive));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_size_is_never_replaced() {
        let gauge = IntGauge::new("g", "g").unwrap();
        let pinned = FleetSize::new(Some(3), gauge.clone());
        pinned.learn(7);
        assert_eq!((pinned.get(), gauge.get()), (3, 3));
        let learned = FleetSize::new(None, gauge.clone());
        assert_eq!(learned.get(), 1);
        learned.learn(4);
        assert_eq!((learned.get(), gauge.get()), (4, 4));
        learned.learn(0);
        assert_eq!(learned.get(), 1, "this instance at least");
    }
}
