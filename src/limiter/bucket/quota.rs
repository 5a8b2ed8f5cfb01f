//! A quota: a bucket that refills all at once when its calendar period ends ([`Periods`]).
//! It holds what is left of the period's quota; a state stored before the period began is a
//! full bucket, so no count leaks from one period into the next.

use super::{BucketSpec, BucketState, Periods, SpecError, MAX_CAPACITY};

impl BucketSpec {
    /// A quota of `capacity` tokens per period, counted in `periods`.
    pub fn quota(capacity: f64, periods: Periods) -> Result<Self, SpecError> {
        if !(1.0..=MAX_CAPACITY).contains(&capacity) {
            return Err(SpecError::Capacity);
        }
        Ok(Self {
            capacity,
            rate_per_second: 0.0,
            periods: Some(periods),
        })
    }

    /// This quota counted in `periods` instead (a bucket refilled continuously stays as it is).
    pub fn in_periods(self, periods: Periods) -> Self {
        match self.periods {
            Some(_) => Self {
                periods: Some(periods),
                ..self
            },
            None => self,
        }
    }

    /// A quota's periods; `None` for a bucket refilled continuously.
    pub fn periods(&self) -> Option<Periods> {
        self.periods
    }

    /// A quota's tokens at `now_us`: what is left of this period's, or all of it when `state`
    /// was stored before the period began (the old period's count never leaks into the new).
    pub(super) fn refill_quota(
        &self,
        periods: Periods,
        state: Option<BucketState>,
        now_us: u64,
    ) -> BucketState {
        let Some(state) = state else {
            return BucketState {
                tokens: self.capacity,
                updated_us: now_us,
                blocked_until_us: 0,
            };
        };
        let (start, _) = periods.at(now_us);
        let tokens = match state.updated_us < start {
            true => self.capacity,
            false => state.tokens.min(self.capacity),
        };
        BucketState {
            tokens,
            updated_us: state.updated_us.max(now_us),
            blocked_until_us: state.blocked_until_us,
        }
    }
}
