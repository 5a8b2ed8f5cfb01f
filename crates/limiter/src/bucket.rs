//! Pure token-bucket arithmetic, time passed in: the specification `lua/` mirrors.
//!
//! A bucket holds up to `capacity` tokens and gains `rate` tokens per second, continuously:
//! fractions of a token are kept, never rounded away. Time is whole microseconds on one clock
//! (the proxy's monotonic clock for the memory store, Redis's `TIME` for the Redis store). A
//! clock that goes backwards counts as no time passed. A bucket nobody has stored is full.
//!
//! A take may come with [`Terms`]: an overdraft (prepayment, `max_delay`: the take pays now,
//! into debt, and waits until its tokens would have been there) and a penalty (`block_for`: a
//! refusal blocks the bucket for that long, whatever the refill).
//!
//! A quota is a bucket that refills all at once, at the end of its calendar period
//! ([`Periods`]): it holds what is left of the period's quota, and a state stored before the
//! period began is a full bucket. Its clock is the store's wall clock (Unix microseconds).

/// Tokens are compared with this slack so that waiting exactly the advertised retry-after is
/// always enough, whatever the floating-point rounding of the refill.
pub const EPSILON: f64 = 1e-9;

/// Microseconds in a second.
pub const MICROS_PER_SECOND: f64 = 1_000_000.0;

/// The largest capacity: whole tokens stay exact in an f64 with 13 bits left for fractions.
pub const MAX_CAPACITY: f64 = (1u64 << 40) as f64;
/// The fastest refill accepted, tokens per second.
pub const MAX_RATE_PER_SECOND: f64 = 1e9;
/// The longest time an empty bucket may take to fill: ten years. Every wait the arithmetic
/// reports (and so every `Retry-After`) stays below it, exact in microseconds.
pub const MAX_REFILL_US: f64 = 10.0 * 366.0 * 86_400.0 * MICROS_PER_SECOND;

/// The deepest debt a settlement leaves, in seconds of refill: [`MAX_REFILL_US`] in seconds.
/// `lua/take.lua` uses the same number.
pub const MAX_DEBT_SECONDS: f64 = 316_224_000.0;

mod assess;
mod assessment;
mod leased;
mod periods;
mod refill;
mod settle;
mod spec;
mod state;

pub use assessment::{Allowed, Assessment, Penalty, Refused, Terms};
pub use leased::{LeasedState, OnLease, LEASE_WINDOW_US};
pub use periods::Periods;
pub use spec::{BucketSpec, Refill, SpecError};
pub use state::BucketState;

#[cfg(test)]
mod quota_tests;
#[cfg(test)]
mod tests;
