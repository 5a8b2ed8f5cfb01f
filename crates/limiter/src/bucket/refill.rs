//! Time passing: a bucket's tokens at an instant, refilled continuously or, for a quota, all
//! at once when its period ends; how long gaining tokens takes; how long a state is worth
//! keeping. A clock that goes backwards counts as no time passed.

use super::{BucketSpec, BucketState, Periods, Refill, MICROS_PER_SECOND};

impl BucketSpec {
    /// The bucket's tokens at `now_us`, refilled from `state` (`None` is a full bucket).
    pub fn refill(&self, state: Option<BucketState>, now_us: u64) -> BucketState {
        let Some(state) = state else {
            return BucketState {
                tokens: self.capacity,
                updated_us: now_us,
                blocked_until_us: 0,
            };
        };
        let tokens = match self.refill {
            // A clock that went backwards is treated as no time passed; the later stamp is
            // kept so that the same interval is never credited twice.
            Refill::Continuous { .. } => {
                let elapsed_us = now_us.saturating_sub(state.updated_us);
                self.gained(state.tokens, elapsed_us, self.capacity)
            }
            Refill::Calendar(periods) => self.quota_tokens(periods, &state, now_us),
        };
        BucketState {
            tokens,
            updated_us: state.updated_us.max(now_us),
            blocked_until_us: state.blocked_until_us,
        }
    }

    /// `tokens` after `elapsed_us` of continuous refill, at most `cap` (a quota gains nothing
    /// between its boundaries).
    pub(super) fn gained(&self, tokens: f64, elapsed_us: u64, cap: f64) -> f64 {
        let gained = elapsed_us as f64 * self.rate_per_second() / MICROS_PER_SECOND;
        (tokens + gained).min(cap)
    }

    /// A quota's tokens at `now_us`: what is left of this period's, or all of it when `state`
    /// was stored before the period began (the old period's count never leaks into the new).
    fn quota_tokens(&self, periods: Periods, state: &BucketState, now_us: u64) -> f64 {
        let (start, _) = periods.at(now_us);
        match state.updated_us < start {
            true => self.capacity,
            false => state.tokens.min(self.capacity),
        }
    }

    /// Microseconds from `now_us` needed to gain `tokens`, rounded up: by the refill rate, or
    /// for a quota, until its period ends (when all of it comes back).
    pub fn micros_to_gain(&self, tokens: f64, now_us: u64) -> u64 {
        if tokens <= 0.0 {
            return 0;
        }
        match self.refill {
            Refill::Calendar(periods) => periods.to_end_us(now_us),
            Refill::Continuous { per_second } => {
                (tokens * MICROS_PER_SECOND / per_second).ceil() as u64
            }
        }
    }

    /// How long a bucket stored as `state` must be kept at `now_us`: until it is full again
    /// and its block is over (0: it can be forgotten, an unknown bucket being full).
    pub fn keep_for_us(&self, state: &BucketState, now_us: u64) -> u64 {
        let full_in = self.micros_to_gain(self.capacity - state.tokens, now_us);
        full_in.max(state.blocked_until_us.saturating_sub(now_us))
    }
}
