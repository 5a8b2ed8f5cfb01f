//! Pure token-bucket arithmetic, time passed in: the specification `lua/` mirrors.
//!
//! A bucket holds up to `capacity` tokens and gains `rate` tokens per second, continuously:
//! fractions of a token are kept, never rounded away. Time is whole microseconds on one clock
//! (the proxy's monotonic clock for the memory store, Redis's `TIME` for the Redis store). A
//! clock that goes backwards counts as no time passed. A bucket nobody has stored is full.

/// Tokens are compared with this slack so that waiting exactly the advertised retry-after is
/// always enough, whatever the floating-point rounding of the refill.
pub const EPSILON: f64 = 1e-9;

const MICROS_PER_SECOND: f64 = 1_000_000.0;

/// A bucket's shape: how many tokens it holds and how fast it refills.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BucketSpec {
    /// Most tokens the bucket holds: the burst size.
    pub capacity: f64,
    /// Tokens gained per second.
    pub rate_per_second: f64,
}

/// What is stored for a bucket between requests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BucketState {
    /// Tokens held at `updated_us`, fractional.
    pub tokens: f64,
    /// When `tokens` was true, in microseconds on the store's clock.
    pub updated_us: u64,
}

/// The answer for one bucket and one cost at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Assessment {
    /// Whether the bucket holds `cost` tokens.
    pub allowed: bool,
    /// Tokens left: after taking `cost` if allowed, as they are if not.
    pub remaining: f64,
    /// Microseconds until `cost` tokens are available; 0 when allowed.
    pub retry_after_us: u64,
    /// Microseconds until the bucket is full again, counted from `remaining`.
    pub full_in_us: u64,
}

impl BucketSpec {
    /// The bucket's tokens at `now_us`, refilled from `state` (`None` is a full bucket).
    pub fn refill(&self, state: Option<BucketState>, now_us: u64) -> BucketState {
        let Some(state) = state else {
            return BucketState {
                tokens: self.capacity,
                updated_us: now_us,
            };
        };
        // A clock that went backwards is treated as no time passed; the later stamp is kept
        // so that the same interval is never credited twice.
        let elapsed_us = now_us.saturating_sub(state.updated_us);
        let gained = elapsed_us as f64 * self.rate_per_second / MICROS_PER_SECOND;
        BucketState {
            tokens: (state.tokens + gained).min(self.capacity),
            updated_us: state.updated_us.max(now_us),
        }
    }

    /// Whether `level` can pay `cost`, and what the bucket would look like after.
    pub fn assess(&self, level: BucketState, cost: f64) -> Assessment {
        if level.tokens + EPSILON >= cost {
            let remaining = (level.tokens - cost).max(0.0);
            Assessment {
                allowed: true,
                remaining,
                retry_after_us: 0,
                full_in_us: self.micros_to_gain(self.capacity - remaining),
            }
        } else {
            Assessment {
                allowed: false,
                remaining: level.tokens,
                retry_after_us: self.micros_to_gain(cost - level.tokens),
                full_in_us: self.micros_to_gain(self.capacity - level.tokens),
            }
        }
    }

    /// The state to store after an allowed take of `cost` from `level`.
    pub fn after_take(&self, level: BucketState, cost: f64) -> BucketState {
        BucketState {
            tokens: (level.tokens - cost).max(0.0),
            updated_us: level.updated_us,
        }
    }

    /// Microseconds needed to gain `tokens`, rounded up.
    pub fn micros_to_gain(&self, tokens: f64) -> u64 {
        if tokens <= 0.0 {
            return 0;
        }
        (tokens * MICROS_PER_SECOND / self.rate_per_second).ceil() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: u64 = 1_000_000;

    fn spec(capacity: f64, rate_per_second: f64) -> BucketSpec {
        BucketSpec {
            capacity,
            rate_per_second,
        }
    }

    /// Takes `cost` at `now`, storing the result as the memory store does.
    fn take(s: &BucketSpec, state: &mut Option<BucketState>, cost: f64, now: u64) -> Assessment {
        let level = s.refill(*state, now);
        let a = s.assess(level, cost);
        if a.allowed {
            *state = Some(s.after_take(level, cost));
        }
        a
    }

    #[test]
    fn an_unknown_bucket_is_full() {
        let s = spec(10.0, 1.0);
        assert_eq!(s.refill(None, 42).tokens, 10.0);
    }

    #[test]
    fn a_burst_of_capacity_passes_then_the_next_is_refused() {
        let s = spec(10.0, 10.0);
        let mut state = None;
        for i in 0..10 {
            let a = take(&s, &mut state, 1.0, 0);
            assert!(a.allowed, "request {i}");
            assert_eq!(a.remaining, 9.0 - i as f64);
        }
        let refused = take(&s, &mut state, 1.0, 0);
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after_us, 100_000);
        assert_eq!(refused.full_in_us, SECOND);
    }

    #[test]
    fn refill_adds_rate_times_elapsed() {
        let s = spec(10.0, 2.0);
        let state = Some(BucketState {
            tokens: 1.0,
            updated_us: 0,
        });
        assert_eq!(s.refill(state, 2 * SECOND).tokens, 5.0);
    }

    #[test]
    fn refill_caps_at_capacity() {
        let s = spec(10.0, 2.0);
        let state = Some(BucketState {
            tokens: 9.0,
            updated_us: 0,
        });
        assert_eq!(s.refill(state, 60 * SECOND).tokens, 10.0);
    }

    #[test]
    fn fractional_refill_is_kept_across_requests() {
        // 1 token per 3 s: three requests one second apart add up to one whole token.
        let s = spec(1.0, 1.0 / 3.0);
        let mut state = Some(BucketState {
            tokens: 0.0,
            updated_us: 0,
        });
        assert!(!take(&s, &mut state, 1.0, SECOND).allowed);
        assert!(!take(&s, &mut state, 1.0, 2 * SECOND).allowed);
        assert!(take(&s, &mut state, 1.0, 3 * SECOND).allowed);
    }

    #[test]
    fn fractional_rates_per_minute_give_exact_retry_after() {
        // 1 per 60 s (seed 004): the second request waits the whole minute.
        let s = spec(1.0, 1.0 / 60.0);
        let mut state = None;
        assert!(take(&s, &mut state, 1.0, 0).allowed);
        let refused = take(&s, &mut state, 1.0, 15 * SECOND);
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after_us, 45 * SECOND);
        assert!(take(&s, &mut state, 1.0, 60 * SECOND).allowed);
    }

    #[test]
    fn cost_above_one_takes_that_many_tokens() {
        // Seed 001: cost 5 on capacity 10 → allowed, allowed, refused.
        let s = spec(10.0, 1.0);
        let mut state = None;
        assert!(take(&s, &mut state, 5.0, 0).allowed);
        assert!(take(&s, &mut state, 5.0, 0).allowed);
        let refused = take(&s, &mut state, 5.0, 0);
        assert!(!refused.allowed);
        assert_eq!(refused.remaining, 0.0);
        assert_eq!(refused.retry_after_us, 5 * SECOND);
    }

    #[test]
    fn a_refused_request_takes_nothing() {
        let s = spec(10.0, 1.0);
        let mut state = Some(BucketState {
            tokens: 3.0,
            updated_us: 0,
        });
        assert!(!take(&s, &mut state, 5.0, 0).allowed);
        assert_eq!(state.map(|b| b.tokens), Some(3.0));
    }

    #[test]
    fn a_long_idle_gap_refills_to_capacity_without_overflow() {
        let s = spec(5.0, 1000.0);
        let state = Some(BucketState {
            tokens: 0.0,
            updated_us: 0,
        });
        let level = s.refill(state, u64::MAX);
        assert_eq!(level.tokens, 5.0);
        assert_eq!(level.updated_us, u64::MAX);
    }

    #[test]
    fn a_clock_going_backwards_counts_as_no_time() {
        let s = spec(10.0, 1.0);
        let state = Some(BucketState {
            tokens: 2.0,
            updated_us: 10 * SECOND,
        });
        let level = s.refill(state, 4 * SECOND);
        assert_eq!(level.tokens, 2.0);
        assert_eq!(level.updated_us, 10 * SECOND, "the later stamp is kept");
        // Once the clock passes the stored stamp again, only the new interval counts.
        assert_eq!(s.refill(Some(level), 11 * SECOND).tokens, 3.0);
    }

    #[test]
    fn waiting_the_retry_after_is_always_enough() {
        for rate in [0.1, 0.3, 1.0, 3.0, 7.0, 10.0, 333.0] {
            let s = spec(3.0, rate);
            let mut state = Some(BucketState {
                tokens: 0.123,
                updated_us: 1,
            });
            let refused = take(&s, &mut state, 1.0, 1);
            assert!(!refused.allowed);
            let later = 1 + refused.retry_after_us;
            assert!(take(&s, &mut state, 1.0, later).allowed, "rate {rate}");
        }
    }

    #[test]
    fn full_in_counts_from_what_is_left() {
        let s = spec(10.0, 2.0);
        let a = s.assess(
            BucketState {
                tokens: 10.0,
                updated_us: 0,
            },
            4.0,
        );
        assert_eq!(a.full_in_us, 2 * SECOND);
    }
}
