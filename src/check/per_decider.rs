//! A value made from the decider in force and kept until another decider takes over (a
//! reload). The value remembers its decider by a `Weak`: that holds the decider's allocation,
//! so no later decider can live at its address and be taken for it, yet the old decider's
//! contents are dropped as soon as nothing else uses them.

use arc_swap::ArcSwapOption;
use std::ops::Deref;
use std::sync::{Arc, Weak};

/// The value made from the latest decider asked about.
pub(crate) struct PerDecider<D, V> {
    made: ArcSwapOption<Made<D, V>>,
}

/// A value and the decider it was made from.
pub(crate) struct Made<D, V> {
    from: Weak<D>,
    value: V,
}

impl<D, V> Deref for Made<D, V> {
    type Target = V;

    fn deref(&self) -> &V {
        &self.value
    }
}

impl<D, V> Default for PerDecider<D, V> {
    fn default() -> Self {
        Self {
            made: ArcSwapOption::empty(),
        }
    }
}

impl<D, V> PerDecider<D, V> {
    /// The value for `decider`: the kept one when it was made from `decider`, else `make`'s
    /// (kept in its place).
    pub(crate) fn get(&self, decider: &Arc<D>, make: impl FnOnce(&D) -> V) -> Arc<Made<D, V>> {
        let kept = self.made.load_full();
        if let Some(kept) = kept.filter(|kept| kept.from.as_ptr() == Arc::as_ptr(decider)) {
            return kept;
        }
        let made = Arc::new(Made {
            from: Arc::downgrade(decider),
            value: make(decider),
        });
        self.made.store(Some(made.clone()));
        made
    }
}

#[cfg(test)]
mod tests {
    use super::PerDecider;
    use std::cell::Cell;
    use std::sync::Arc;

    #[test]
    fn a_value_is_made_once_per_decider() {
        let memo = PerDecider::<u64, u64>::default();
        let made = Cell::new(0);
        let decider = Arc::new(7);
        for _ in 0..3 {
            let value = memo.get(&decider, |d| {
                made.set(made.get() + 1);
                d * 2
            });
            assert_eq!(**value, 14);
        }
        assert_eq!(made.get(), 1);
    }

    /// Regression: the resolver was kept by the decider's address alone, so a reloaded decider
    /// allocated where the dropped one lived got the old decider's trusted proxies.
    #[test]
    fn a_new_decider_where_the_old_one_lived_gets_its_own_value() {
        let memo = PerDecider::<[u64; 4], u64>::default();
        let old = Arc::new([1; 4]);
        assert_eq!(**memo.get(&old, |d| d[0]), 1);
        drop(old);
        // Allocators hand a freed block of the same size straight back: without the `Weak`
        // the new decider would usually sit at the old address.
        for round in 2..10 {
            let new = Arc::new([round; 4]);
            assert_eq!(**memo.get(&new, |d| d[0]), round);
        }
    }
}
