//! How many instances share the store's buckets: pinned by `store.fleet_size`, or learned from
//! the instances that announce themselves in Redis. The local fallback divides by it, so that
//! N instances deciding alone still admit about one limit together.
//!
//! A learned count is the largest read within one membership lifetime
//! ([`MEMBERSHIP_LIFETIME`]): right after a Redis restart, or while instances start, the
//! first to announce sees only itself, and taking that at once would hand it the whole
//! bucket as its share. A smaller fleet is believed once the larger counts are that old, which
//! is when the departed instances' memberships would have lapsed anyway.

use crate::clock::MonotonicClock;
use parking_lot::Mutex;
use prometheus::IntGauge;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// How long a membership lasts without renewal: three announcements.
pub const MEMBERSHIP_LIFETIME: Duration = Duration::from_secs(3);

/// How often an instance announces itself.
pub const ANNOUNCE_INTERVAL: Duration = Duration::from_secs(1);

/// The most counts kept (announcements come every 100 ms at the fastest).
const MAX_SEEN: usize = 64;

/// The fleet's size as this instance knows it.
pub struct FleetSize {
    pinned: Option<u32>,
    in_use: AtomicU32,
    /// (when, count) of the counts read within the last membership lifetime.
    seen: Mutex<VecDeque<(u64, u32)>>,
    clock: MonotonicClock,
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
            in_use: AtomicU32::new(start),
            seen: Mutex::new(VecDeque::new()),
            clock: MonotonicClock::new(),
            gauge,
        }
    }

    /// The instance count in use (at least 1).
    pub fn get(&self) -> u32 {
        self.in_use.load(Ordering::Relaxed).max(1)
    }

    /// Whether the count is pinned by configuration (nothing to learn).
    pub fn is_pinned(&self) -> bool {
        self.pinned.is_some()
    }

    /// Takes a count of live instances read from the store now (ignored when pinned).
    pub fn learn(&self, alive: u32) {
        self.learn_at(alive, self.clock.now_us());
    }

    /// Takes a count read at `now_us`: the count in use becomes the largest read within the
    /// last membership lifetime.
    pub fn learn_at(&self, alive: u32, now_us: u64) {
        if self.pinned.is_some() {
            return;
        }
        let lifetime_us = MEMBERSHIP_LIFETIME.as_micros() as u64;
        let mut seen = self.seen.lock();
        seen.retain(|&(at, _)| now_us.saturating_sub(at) < lifetime_us);
        if seen.len() >= MAX_SEEN {
            seen.pop_front();
        }
        seen.push_back((now_us, alive.max(1)));
        let size = seen.iter().map(|&(_, n)| n).max().unwrap_or(1);
        self.in_use.store(size, Ordering::Relaxed);
        self.gauge.set(i64::from(size));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: u64 = 1_000_000;

    #[test]
    fn a_pinned_size_is_never_replaced() {
        let gauge = IntGauge::new("g", "g").unwrap();
        let pinned = FleetSize::new(Some(3), gauge.clone());
        pinned.learn_at(7, 0);
        assert_eq!((pinned.get(), gauge.get()), (3, 3));
        let learned = FleetSize::new(None, gauge.clone());
        assert_eq!(learned.get(), 1);
        learned.learn_at(4, 0);
        assert_eq!((learned.get(), gauge.get()), (4, 4));
        learned.learn_at(0, 4 * SECOND);
        assert_eq!(learned.get(), 1, "this instance at least");
    }

    #[test]
    fn a_smaller_count_is_believed_only_once_the_larger_ones_are_a_lifetime_old() {
        let gauge = IntGauge::new("g", "g").unwrap();
        let fleet = FleetSize::new(None, gauge.clone());
        fleet.learn_at(3, 0);
        // Redis restarted: this instance re-announces first and sees only itself.
        fleet.learn_at(1, SECOND);
        assert_eq!(
            (fleet.get(), gauge.get()),
            (3, 3),
            "the larger count stands"
        );
        fleet.learn_at(2, 2 * SECOND);
        assert_eq!(fleet.get(), 3);
        // 3 s after the 3 was read, the largest count within the lifetime is the 2.
        fleet.learn_at(1, 3 * SECOND);
        assert_eq!((fleet.get(), gauge.get()), (2, 2));
        fleet.learn_at(1, 5 * SECOND);
        assert_eq!(fleet.get(), 1, "one instance left");
        fleet.learn_at(4, 5 * SECOND + 1);
        assert_eq!(fleet.get(), 4, "a larger count is taken at once");
    }

    #[test]
    fn the_counts_kept_are_bounded() {
        let fleet = FleetSize::new(None, IntGauge::new("g", "g").unwrap());
        for i in 0..1000 {
            fleet.learn_at(2, i);
        }
        assert!(fleet.seen.lock().len() <= MAX_SEEN);
        assert_eq!(fleet.get(), 2);
    }
}
