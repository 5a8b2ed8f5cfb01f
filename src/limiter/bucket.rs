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

/// The largest capacity: whole tokens stay exact in an f64 with 13 bits left for fractions.
pub const MAX_CAPACITY: f64 = (1u64 << 40) as f64;
/// The fastest refill accepted, tokens per second.
pub const MAX_RATE_PER_SECOND: f64 = 1e9;
/// The longest time an empty bucket may take to fill: ten years. Every wait the arithmetic
/// reports (and so every `Retry-After`) stays below it, exact in microseconds.
pub const MAX_REFILL_US: f64 = 10.0 * 366.0 * 86_400.0 * MICROS_PER_SECOND;

/// A bucket's shape: how many tokens it holds and how fast it refills. Built only through
/// [`BucketSpec::new`], so every spec keeps the arithmetic exact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BucketSpec {
    capacity: f64,
    rate_per_second: f64,
}

/// Why a capacity and rate cannot make a bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// The capacity is not between 1 and [`MAX_CAPACITY`].
    #[error("the capacity must be between 1 and 2^40 tokens")]
    Capacity,
    /// The rate is not positive, finite and at most [`MAX_RATE_PER_SECOND`].
    #[error("the rate must be positive and at most 1e9 tokens per second")]
    Rate,
    /// An empty bucket would take longer than [`MAX_REFILL_US`] to fill.
    #[error("an empty bucket would take more than ten years to refill; raise the rate")]
    TooSlow,
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
    /// A bucket of `capacity` tokens gaining `rate_per_second`, if the arithmetic stays exact.
    pub fn new(capacity: f64, rate_per_second: f64) -> Result<Self, SpecError> {
        if !(1.0..=MAX_CAPACITY).contains(&capacity) {
            return Err(SpecError::Capacity);
        }
        if !(rate_per_second > 0.0 && rate_per_second <= MAX_RATE_PER_SECOND) {
            return Err(SpecError::Rate);
        }
        if capacity * MICROS_PER_SECOND / rate_per_second > MAX_REFILL_US {
            return Err(SpecError::TooSlow);
        }
        Ok(Self {
            capacity,
            rate_per_second,
        })
    }

    /// Most tokens the bucket holds: the burst size.
    pub fn capacity(&self) -> f64 {
        self.capacity
    }

    /// Tokens gained per second.
    pub fn rate_per_second(&self) -> f64 {
        self.rate_per_second
    }

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

    /// A settlement of `delta` tokens at `level` (positive charges, negative refunds): never
    /// refused. A charge may leave the bucket in debt, below zero, which refill and later
    /// requests pay off; a refund never fills it past capacity.
    pub fn settle(&self, level: BucketState, delta: f64) -> Assessment {
        let tokens = (level.tokens - delta).min(self.capacity);
        Assessment {
            allowed: true,
            remaining: tokens,
            retry_after_us: 0,
            full_in_us: self.micros_to_gain(self.capacity - tokens),
        }
    }

    /// The state to store after settling `delta` at `level`.
    pub fn after_settle(&self, level: BucketState, delta: f64) -> BucketState {
        BucketState {
            tokens: (level.tokens - delta).min(self.capacity),
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
        BucketSpec::new(capacity, rate_per_second).unwrap()
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
    fn specs_that_would_lose_exactness_are_refused() {
        assert_eq!(BucketSpec::new(0.0, 1.0), Err(SpecError::Capacity));
        assert_eq!(BucketSpec::new(1e13, 1.0), Err(SpecError::Capacity));
        assert_eq!(BucketSpec::new(1.0, 0.0), Err(SpecError::Rate));
        assert_eq!(BucketSpec::new(1.0, f64::NAN), Err(SpecError::Rate));
        assert_eq!(BucketSpec::new(1.0, 1e-300), Err(SpecError::TooSlow));
        // One token a year, and a year's worth of tokens at once, are fine.
        assert!(BucketSpec::new(1.0, 1.0 / (365.0 * 86_400.0)).is_ok());
        let slowest = BucketSpec::new(MAX_CAPACITY, 1e9).unwrap();
        assert!(slowest.micros_to_gain(MAX_CAPACITY) < u64::MAX / 1000);
    }

    #[test]
    fn a_charge_past_the_level_leaves_debt_that_refill_pays_off() {
        let s = spec(100.0, 10.0);
        let mut state = Some(BucketState {
            tokens: 50.0,
            updated_us: 0,
        });
        let level = s.refill(state, 0);
        let charged = s.settle(level, 80.0);
        assert!(charged.allowed);
        assert_eq!(charged.remaining, -30.0);
        state = Some(s.after_settle(level, 80.0));
        // In debt, even a cost of one waits for the debt to be paid off.
        let refused = take(&s, &mut state, 1.0, 0);
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after_us, 3_100_000);
        assert!(take(&s, &mut state, 1.0, 3_100_000).allowed);
    }

    #[test]
    fn a_refund_never_fills_past_capacity() {
        let s = spec(10.0, 1.0);
        let level = BucketState {
            tokens: 8.0,
            updated_us: 0,
        };
        assert_eq!(s.settle(level, -5.0).remaining, 10.0);
        assert_eq!(s.after_settle(level, -1.5).tokens, 9.5);
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
