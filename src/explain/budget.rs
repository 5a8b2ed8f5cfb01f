//! How many records an instance writes to the fleet's shelf: at most `keep` per `max_age`
//! window, so Redis holds about (instances × `keep`) records whatever the traffic; allowed
//! requests take at most half of that, so a flood of them never crowds out the refusals
//! customers ask about. Time is an argument.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The writes left in the current window.
#[derive(Debug, Default)]
pub struct Budget {
    window: AtomicU64,
    used: AtomicU64,
}

impl Budget {
    /// Whether a record (a `refusal` or not) may be written at `now_ms`, with `keep` records
    /// per `max_age_ms`; counts it if so.
    pub fn admit(&self, refusal: bool, keep: u64, max_age_ms: u64, now_ms: u64) -> bool {
        let window = now_ms / max_age_ms.max(1);
        if self.window.swap(window, Relaxed) != window {
            self.used.store(0, Relaxed);
        }
        let limit = if refusal { keep } else { keep / 2 };
        self.used
            .fetch_update(Relaxed, Relaxed, |used| (used < limit).then_some(used + 1))
            .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_records_take_half_refusals_the_rest_and_a_new_window_starts_afresh() {
        let budget = Budget::default();
        let admitted = |refusal, now| budget.admit(refusal, 4, 1_000, now);
        assert!(admitted(false, 0) && admitted(false, 1));
        assert!(!admitted(false, 2), "allowed ones stop at half");
        assert!(admitted(true, 3) && admitted(true, 4));
        assert!(!admitted(true, 5), "then every one stops");
        assert!(admitted(false, 1_000), "the next window");
    }
}
