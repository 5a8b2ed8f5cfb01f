//! A bucket's size and refill, checked once when the config is read: every policy and tier
//! holds one, and every bucket built from one keeps the arithmetic exact. The refill is a
//! rate, or for a quota the end of each calendar period (the policy's [`QuotaCalendar`]).

use super::{QuotaCalendar, Rate};
use crate::limiter::{BucketSpec, Periods, SpecError};

/// A bucket's size and refill.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    capacity: u64,
    refill: Refill,
}

/// How a bucket of [`Limits`] refills.
#[derive(Debug, Clone, PartialEq)]
enum Refill {
    /// Continuously, at a rate.
    Rate { rate: Rate, spec: BucketSpec },
    /// All at once when its calendar period ends (`spec` counts in one unending period).
    Quota { spec: BucketSpec },
}

impl Limits {
    /// Limits of `capacity` tokens refilled at `rate`, if a bucket can hold them exactly.
    pub fn new(capacity: u64, rate: Rate) -> Result<Self, SpecError> {
        let spec = BucketSpec::new(capacity as f64, rate.per_second())?;
        Ok(Self {
            capacity,
            refill: Refill::Rate { rate, spec },
        })
    }

    /// A quota of `count` tokens per calendar period.
    pub fn quota(count: u64) -> Result<Self, SpecError> {
        let spec = BucketSpec::quota(count as f64, Periods::unending())?;
        Ok(Self {
            capacity: count,
            refill: Refill::Quota { spec },
        })
    }

    /// Burst size, or a quota's tokens per period.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The refill rate; `None` for a quota.
    pub fn rate(&self) -> Option<&Rate> {
        match &self.refill {
            Refill::Rate { rate, .. } => Some(rate),
            Refill::Quota { .. } => None,
        }
    }

    /// Whether these are a quota's.
    pub fn is_quota(&self) -> bool {
        matches!(self.refill, Refill::Quota { .. })
    }

    /// The bucket shape these limits give each caller at `now_us` (Unix microseconds; only a
    /// quota reads it, in `calendar`'s periods: a quota without one never resets).
    pub fn spec(&self, calendar: Option<&QuotaCalendar>, now_us: u64) -> BucketSpec {
        match &self.refill {
            Refill::Rate { spec, .. } => *spec,
            Refill::Quota { spec } => match calendar {
                Some(calendar) => spec.in_periods(calendar.periods(now_us)),
                None => *spec,
            },
        }
    }

    /// The window of the `RateLimit-Policy` header: seconds to refill an empty bucket, at
    /// least 1; `None` for a quota (a calendar period has no fixed width).
    pub fn window_seconds(&self) -> Option<u64> {
        let rate = self.rate()?;
        Some((self.capacity as f64 / rate.per_second()).ceil().max(1.0) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(capacity: u64, rate: &str) -> Limits {
        Limits::new(capacity, rate.parse().unwrap()).unwrap()
    }

    #[test]
    fn the_window_is_the_time_to_refill_from_empty() {
        assert_eq!(limits(10, "10/s").window_seconds(), Some(1));
        assert_eq!(limits(1, "1/m").window_seconds(), Some(60));
        assert_eq!(limits(100, "1000/s").window_seconds(), Some(1));
        assert_eq!(limits(5, "2/s").window_seconds(), Some(3));
        assert_eq!(Limits::quota(50).unwrap().window_seconds(), None);
    }

    #[test]
    fn limits_that_would_lose_exactness_are_refused() {
        let rate = |r: &str| r.parse::<Rate>().unwrap();
        assert_eq!(Limits::new(10, rate("1e-300/s")), Err(SpecError::TooSlow));
        assert_eq!(Limits::new(0, rate("1/s")), Err(SpecError::Capacity));
        assert!(Limits::new(10, rate("1/d")).is_ok());
        assert_eq!(Limits::quota(0), Err(SpecError::Capacity));
    }
}
