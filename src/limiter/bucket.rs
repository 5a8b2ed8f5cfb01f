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

const MICROS_PER_SECOND: f64 = 1_000_000.0;

/// The largest capacity: whole tokens stay exact in an f64 with 13 bits left for fractions.
pub const MAX_CAPACITY: f64 = (1u64 << 40) as f64;
/// The fastest refill accepted, tokens per second.
pub const MAX_RATE_PER_SECOND: f64 = 1e9;
/// The longest time an empty bucket may take to fill: ten years. Every wait the arithmetic
/// reports (and so every `Retry-After`) stays below it, exact in microseconds.
pub const MAX_REFILL_US: f64 = 10.0 * 366.0 * 86_400.0 * MICROS_PER_SECOND;

/// The deepest debt a settlement leaves, in seconds of refill: [`MAX_REFILL_US`] in seconds.
/// `lua/take.lua` uses the same number.
const MAX_DEBT_SECONDS: f64 = 316_224_000.0;

/// A bucket's shape: how many tokens it holds and how fast it refills (continuously, or all
/// at once at a period's end). Built only through [`BucketSpec::new`] and
/// [`BucketSpec::quota`], so every spec keeps the arithmetic exact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BucketSpec {
    capacity: f64,
    /// 0 for a quota.
    rate_per_second: f64,
    /// A quota's periods; `None` for a bucket that refills continuously.
    periods: Option<Periods>,
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
    /// Tokens held at `updated_us`, fractional; below zero while the bucket is in debt.
    pub tokens: f64,
    /// When `tokens` was true, in microseconds on the store's clock.
    pub updated_us: u64,
    /// Until when a penalty refuses every take, on the store's clock; 0 for none.
    pub blocked_until_us: u64,
}

/// What a take may do beyond paying from what the bucket holds now.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Terms {
    /// Tokens the bucket may go below zero to pay now (rate × `max_delay`): such a take is
    /// allowed and waits `retry_after_us` for its tokens to have been there.
    pub overdraft: f64,
    /// How long a refusal blocks the bucket (`block_for`), in microseconds; 0 for never.
    pub block_us: u64,
}

/// A penalty's part in an answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Penalty {
    /// No block is involved.
    #[default]
    None,
    /// This refusal started a block.
    Started,
    /// A block started earlier refused this take.
    Standing,
}

impl Penalty {
    /// The penalty's number in the Redis script's reply.
    pub fn wire(self) -> u8 {
        match self {
            Penalty::None => 0,
            Penalty::Started => 1,
            Penalty::Standing => 2,
        }
    }

    /// The penalty the script's number `n` stands for.
    pub fn from_wire(n: u64) -> Option<Self> {
        match n {
            0 => Some(Penalty::None),
            1 => Some(Penalty::Started),
            2 => Some(Penalty::Standing),
            _ => None,
        }
    }
}

/// The answer for one bucket and one cost at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Assessment {
    /// Whether the bucket holds `cost` tokens (or can prepay them within its overdraft).
    pub allowed: bool,
    /// Tokens left: after taking `cost` if allowed (below zero when prepaid), as they are if
    /// not.
    pub remaining: f64,
    /// Refused: microseconds until the take would be allowed (a block's end at the earliest).
    /// Allowed: how long a prepaid take waits for its tokens; 0 when it needs not wait.
    pub retry_after_us: u64,
    /// Microseconds until the bucket is full again, counted from `remaining`.
    pub full_in_us: u64,
    /// Whether a penalty block refused the take, or this refusal started one.
    pub penalty: Penalty,
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
            periods: None,
        })
    }

    /// Most tokens the bucket holds: the burst size.
    pub fn capacity(&self) -> f64 {
        self.capacity
    }

    /// Tokens gained per second (0 for a quota).
    pub fn rate_per_second(&self) -> f64 {
        self.rate_per_second
    }

    /// The bucket's tokens at `now_us`, refilled from `state` (`None` is a full bucket).
    pub fn refill(&self, state: Option<BucketState>, now_us: u64) -> BucketState {
        if let Some(periods) = self.periods {
            return self.refill_quota(periods, state, now_us);
        }
        let Some(state) = state else {
            return BucketState {
                tokens: self.capacity,
                updated_us: now_us,
                blocked_until_us: 0,
            };
        };
        // A clock that went backwards is treated as no time passed; the later stamp is kept
        // so that the same interval is never credited twice.
        let elapsed_us = now_us.saturating_sub(state.updated_us);
        BucketState {
            tokens: self.gained(state.tokens, elapsed_us, self.capacity),
            updated_us: state.updated_us.max(now_us),
            blocked_until_us: state.blocked_until_us,
        }
    }

    /// `tokens` after `elapsed_us` of refill, at most `cap`.
    fn gained(&self, tokens: f64, elapsed_us: u64, cap: f64) -> f64 {
        let gained = elapsed_us as f64 * self.rate_per_second / MICROS_PER_SECOND;
        (tokens + gained).min(cap)
    }

    /// Whether `level` can pay `cost` at `now_us` under `terms`, and what the bucket would
    /// look like after: paid from what it holds, prepaid into the overdraft (allowed, with a
    /// wait), or refused (by a standing block, or for want of tokens, which starts a block
    /// when the terms have one).
    pub fn assess(&self, level: BucketState, cost: f64, terms: Terms, now_us: u64) -> Assessment {
        let tokens = level.tokens;
        let refused = |retry_after_us: u64, penalty: Penalty| Assessment {
            allowed: false,
            remaining: tokens,
            retry_after_us,
            full_in_us: self.micros_to_gain(self.capacity - tokens, now_us),
            penalty,
        };
        let short = cost - terms.overdraft - tokens;
        let token_wait = match tokens + terms.overdraft + EPSILON >= cost {
            true => 0,
            false => self.micros_to_gain(short, now_us),
        };
        if now_us < level.blocked_until_us {
            let block_wait = level.blocked_until_us - now_us;
            return refused(block_wait.max(token_wait), Penalty::Standing);
        }
        if token_wait > 0 {
            return match terms.block_us {
                0 => refused(token_wait, Penalty::None),
                block => refused(token_wait.max(block), Penalty::Started),
            };
        }
        let (remaining, wait_us) = match tokens + EPSILON >= cost {
            true => ((tokens - cost).max(0.0), 0),
            false => (tokens - cost, self.micros_to_gain(cost - tokens, now_us)),
        };
        Assessment {
            allowed: true,
            remaining,
            retry_after_us: wait_us,
            full_in_us: self.micros_to_gain(self.capacity - remaining, now_us),
            penalty: Penalty::None,
        }
    }

    /// The state to store after an allowed take from `level` answered `assessment`.
    pub fn after_take(&self, level: BucketState, assessment: &Assessment) -> BucketState {
        BucketState {
            tokens: assessment.remaining,
            ..level
        }
    }

    /// The state to store after a refusal at `now_us` that started a block under `terms`:
    /// the tokens are untouched, the block runs from now.
    pub fn after_refusal(&self, level: BucketState, terms: Terms, now_us: u64) -> BucketState {
        BucketState {
            blocked_until_us: now_us.saturating_add(terms.block_us),
            ..level
        }
    }

    /// A settlement of `delta` tokens at `level` (positive charges, negative refunds): never
    /// refused. A charge may leave the bucket in debt, below zero, which refill and later
    /// requests pay off; a refund never fills it past capacity. A block stays as it is. A
    /// quota's settlement applies only in the period its request was admitted in (the middle
    /// one of its [`Periods`]); later it changes nothing.
    pub fn settle(&self, level: BucketState, delta: f64, now_us: u64) -> Assessment {
        self.settled_answer(self.settled(level, delta, now_us), now_us)
    }

    /// The answer to a settlement that left `tokens`.
    fn settled_answer(&self, tokens: f64, now_us: u64) -> Assessment {
        Assessment {
            allowed: true,
            remaining: tokens,
            retry_after_us: 0,
            full_in_us: self.micros_to_gain(self.capacity - tokens, now_us),
            penalty: Penalty::None,
        }
    }

    /// The state to store after settling `delta` at `level`.
    pub fn after_settle(&self, level: BucketState, delta: f64, now_us: u64) -> BucketState {
        BucketState {
            tokens: self.settled(level, delta, now_us),
            ..level
        }
    }

    /// The tokens after settling `delta` at `level`: at most the capacity, and in debt by at
    /// most ten years of refill (a quota: by at most [`MAX_CAPACITY`]), so every wait the
    /// arithmetic reports stays exact in microseconds.
    fn settled(&self, level: BucketState, delta: f64, now_us: u64) -> f64 {
        let deepest = match self.periods {
            Some(periods) if !periods.settles_at(now_us) => return level.tokens,
            Some(_) => -MAX_CAPACITY,
            None => -(self.rate_per_second * MAX_DEBT_SECONDS),
        };
        (level.tokens - delta).min(self.capacity).max(deepest)
    }

    /// How long a bucket stored as `state` must be kept at `now_us`: until it is full again
    /// and its block is over (0: it can be forgotten, an unknown bucket being full).
    pub fn keep_for_us(&self, state: &BucketState, now_us: u64) -> u64 {
        let full_in = self.micros_to_gain(self.capacity - state.tokens, now_us);
        full_in.max(state.blocked_until_us.saturating_sub(now_us))
    }

    /// Microseconds from `now_us` needed to gain `tokens`, rounded up: by the refill rate, or
    /// for a quota, until its period ends (when all of it comes back).
    pub fn micros_to_gain(&self, tokens: f64, now_us: u64) -> u64 {
        if tokens <= 0.0 {
            return 0;
        }
        match self.periods {
            Some(periods) => periods.to_end_us(now_us),
            None => (tokens * MICROS_PER_SECOND / self.rate_per_second).ceil() as u64,
        }
    }
}

mod leased;
mod periods;
mod quota;

pub use leased::{LeasedState, OnLease, LEASE_WINDOW_US};
pub use periods::Periods;

#[cfg(test)]
mod quota_tests;
#[cfg(test)]
mod tests;
