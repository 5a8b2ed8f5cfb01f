//! Leases in the arithmetic: tokens lent to an instance (to spend without asking) stay counted
//! against their bucket until they come back, so the bucket refills only up to its capacity
//! minus what is out on lease. Then the bucket plus every lease's unspent tokens never holds
//! more than the exact bucket would, however full the bucket was when it lent: a lease moves
//! tokens, it never makes any.
//!
//! Lent tokens are counted by lease window (`LEASE_WINDOW_US` of the store's clock) in two
//! sums, this window's and the one before. A lease lasts less than a window, so when a window
//! is two behind, every lease it counted has lapsed on its instance and its tokens are
//! forgotten: an instance that dies holding a lease keeps them out of reach for two windows
//! at most. A lease's return names its window; a return that comes after its window was
//! forgotten gives nothing back (its tokens could be spent again already).

use super::{Assessment, BucketSpec, BucketState, Terms};

/// The length of a lease window: longer than the longest lease (`store.lease_for` ≤ 10 s),
/// with room for the clocks of Redis and of the instance to run at slightly different speeds.
/// `lua/take.lua` uses the same number.
pub const LEASE_WINDOW_US: u64 = 20_000_000;

/// Tokens out on lease, by the window they were lent in.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OnLease {
    /// The window `current` counts: the stored time ÷ [`LEASE_WINDOW_US`].
    pub window: u64,
    /// Tokens lent in `window` and not given back.
    pub current: f64,
    /// Tokens lent in the window before and not given back.
    pub previous: f64,
}

impl OnLease {
    /// Every token out on lease.
    pub fn total(&self) -> f64 {
        self.current + self.previous
    }

    /// The window of instant `at_us`.
    pub fn window_of(at_us: u64) -> u64 {
        at_us / LEASE_WINDOW_US
    }

    /// The same sums seen from `window` (not before `self.window`): what older windows lent is
    /// forgotten.
    fn rolled_to(self, window: u64) -> Self {
        match window.saturating_sub(self.window) {
            0 => self,
            1 => Self {
                window,
                current: 0.0,
                previous: self.current,
            },
            _ => Self {
                window,
                ..Self::default()
            },
        }
    }

    /// Microseconds from `now_us` until every token counted here is forgotten (0 for none).
    pub fn forgotten_in_us(&self, now_us: u64) -> u64 {
        if self.total() <= 0.0 {
            return 0;
        }
        ((self.window + 2) * LEASE_WINDOW_US).saturating_sub(now_us)
    }
}

/// A bucket and what it has out on lease.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeasedState {
    /// The bucket itself.
    pub bucket: BucketState,
    /// Its tokens out on lease.
    pub on_lease: OnLease,
}

impl BucketSpec {
    /// The bucket at `now_us`, refilled from `stored` (`None`: full, nothing lent), up to its
    /// capacity minus what is out on lease, window by window. With nothing lent this is
    /// [`BucketSpec::refill`], to the bit.
    pub fn refill_leased(&self, stored: Option<LeasedState>, now_us: u64) -> LeasedState {
        if self.periods().is_some() {
            // A quota is never lent: what a lease field says of it is ignored.
            let bucket = self.refill(stored.map(|s| s.bucket), now_us);
            return LeasedState {
                bucket,
                on_lease: OnLease {
                    window: OnLease::window_of(bucket.updated_us),
                    ..OnLease::default()
                },
            };
        }
        let Some(stored) = stored else {
            return LeasedState {
                bucket: self.refill(None, now_us),
                on_lease: OnLease {
                    window: OnLease::window_of(now_us),
                    ..OnLease::default()
                },
            };
        };
        let mut at = stored.bucket.updated_us;
        let now = now_us.max(at);
        let mut tokens = stored.bucket.tokens;
        let mut lent = stored.on_lease;
        // Each window boundary crossed lifts the cap by what the oldest window still counted.
        while lent.total() > 0.0 && (lent.window + 1) * LEASE_WINDOW_US <= now {
            let boundary = (lent.window + 1) * LEASE_WINDOW_US;
            tokens = self.gained(tokens, boundary - at, self.capacity - lent.total());
            at = boundary;
            lent = lent.rolled_to(lent.window + 1);
        }
        tokens = self.gained(tokens, now - at, self.capacity - lent.total());
        LeasedState {
            bucket: BucketState {
                tokens,
                updated_us: now,
                blocked_until_us: stored.bucket.blocked_until_us,
            },
            on_lease: lent.rolled_to(OnLease::window_of(now)),
        }
    }

    /// Lends `size` tokens from `level` at `now_us` if the bucket holds them (a lease never
    /// prepays, never blocks and is refused by a standing block): the answer, and the state
    /// to store when it was lent.
    pub fn lend(
        &self,
        level: LeasedState,
        size: f64,
        now_us: u64,
    ) -> (Assessment, Option<LeasedState>) {
        let assessment = self.assess(level.bucket, size, Terms::default(), now_us);
        if !assessment.is_allowed() {
            return (assessment, None);
        }
        let lent = LeasedState {
            bucket: self.after_take(level.bucket, &assessment),
            on_lease: OnLease {
                current: level.on_lease.current + size,
                ..level.on_lease
            },
        };
        (assessment, Some(lent))
    }

    /// The return of a lease of `leased` tokens lent in `window`, `unspent` of them unspent:
    /// they are no longer out, and the unspent ones go back into the bucket (up to its
    /// capacity minus what is still out). A return whose window is forgotten changes nothing.
    /// Never refused.
    pub fn take_back(
        &self,
        level: LeasedState,
        unspent: f64,
        leased: f64,
        window: u64,
    ) -> (Assessment, LeasedState) {
        let mut lent = level.on_lease;
        let honoured = if window == lent.window {
            lent.current = (lent.current - leased).max(0.0);
            true
        } else if window + 1 == lent.window {
            lent.previous = (lent.previous - leased).max(0.0);
            true
        } else {
            false
        };
        let mut bucket = level.bucket;
        if honoured {
            bucket.tokens = (bucket.tokens + unspent).min(self.capacity - lent.total());
        }
        let after = LeasedState {
            bucket,
            on_lease: lent,
        };
        (self.settled_answer(bucket.tokens, bucket.updated_us), after)
    }

    /// A settlement of `delta` tokens (see [`BucketSpec::settle`]) on a bucket with tokens out
    /// on lease: a refund fills it up to its capacity minus what is out.
    pub fn settle_leased(&self, level: LeasedState, delta: f64) -> (Assessment, LeasedState) {
        let cap = self.capacity - level.on_lease.total();
        let now_us = level.bucket.updated_us;
        let tokens = self.settled(level.bucket, delta, now_us).min(cap);
        let after = LeasedState {
            bucket: BucketState {
                tokens,
                ..level.bucket
            },
            ..level
        };
        (self.settled_answer(tokens, now_us), after)
    }

    /// How long `state` must be kept at `now_us`: until it is full and unblocked (as
    /// [`BucketSpec::keep_for_us`]) after every token it has out on lease is forgotten.
    pub fn keep_leased_for_us(&self, state: &LeasedState, now_us: u64) -> u64 {
        let plain = self.keep_for_us(&state.bucket, now_us);
        plain.saturating_add(state.on_lease.forgotten_in_us(now_us))
    }
}

#[cfg(test)]
mod tests;
