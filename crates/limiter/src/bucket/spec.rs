//! A bucket's shape: how many tokens it holds and how it refills, continuously or all at once
//! at the end of a calendar period. Built only through [`BucketSpec::new`] and
//! [`BucketSpec::quota`], so every spec keeps the arithmetic exact.

use super::{Periods, MAX_CAPACITY, MAX_RATE_PER_SECOND, MAX_REFILL_US, MICROS_PER_SECOND};

/// How a bucket gains its tokens back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Refill {
    /// `per_second` tokens a second, continuously (fractions kept).
    Continuous {
        /// Tokens gained per second.
        per_second: f64,
    },
    /// All at once when its calendar period ends: a quota.
    Calendar(Periods),
}

/// A bucket's shape: its capacity and its refill.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BucketSpec {
    pub(super) capacity: f64,
    pub(super) refill: Refill,
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

impl BucketSpec {
    /// A bucket of `capacity` tokens gaining `rate_per_second`, if the arithmetic stays exact.
    pub fn new(capacity: f64, rate_per_second: f64) -> Result<Self, SpecError> {
        check_capacity(capacity)?;
        if !(rate_per_second > 0.0 && rate_per_second <= MAX_RATE_PER_SECOND) {
            return Err(SpecError::Rate);
        }
        if capacity * MICROS_PER_SECOND / rate_per_second > MAX_REFILL_US {
            return Err(SpecError::TooSlow);
        }
        Ok(Self {
            capacity,
            refill: Refill::Continuous {
                per_second: rate_per_second,
            },
        })
    }

    /// A quota of `capacity` tokens per period, counted in `periods`.
    pub fn quota(capacity: f64, periods: Periods) -> Result<Self, SpecError> {
        check_capacity(capacity)?;
        Ok(Self {
            capacity,
            refill: Refill::Calendar(periods),
        })
    }

    /// This quota counted in `periods` instead (a bucket refilled continuously stays as it is).
    pub fn in_periods(self, periods: Periods) -> Self {
        match self.refill {
            Refill::Calendar(_) => Self {
                refill: Refill::Calendar(periods),
                ..self
            },
            Refill::Continuous { .. } => self,
        }
    }

    /// Most tokens the bucket holds: the burst size.
    pub fn capacity(&self) -> f64 {
        self.capacity
    }

    /// How the bucket refills.
    pub fn refilling(&self) -> Refill {
        self.refill
    }

    /// Tokens gained per second; 0 for a quota (which gains nothing until its period ends:
    /// the take script reads a quota by this 0).
    pub fn rate_per_second(&self) -> f64 {
        match self.refill {
            Refill::Continuous { per_second } => per_second,
            Refill::Calendar(_) => 0.0,
        }
    }

    /// A quota's periods; `None` for a bucket refilled continuously.
    pub fn periods(&self) -> Option<Periods> {
        match self.refill {
            Refill::Calendar(periods) => Some(periods),
            Refill::Continuous { .. } => None,
        }
    }
}

/// `capacity` if it is between 1 and [`MAX_CAPACITY`].
fn check_capacity(capacity: f64) -> Result<(), SpecError> {
    match (1.0..=MAX_CAPACITY).contains(&capacity) {
        true => Ok(()),
        false => Err(SpecError::Capacity),
    }
}
