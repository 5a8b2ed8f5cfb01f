//! A bucket's size and refill, checked once when the config is read: every policy and tier
//! holds one, and every bucket built from one keeps the arithmetic exact. The refill is a
//! rate, or for a quota the end of each period of its calendar (the policy's
//! [`QuotaCalendar`], held by the refill itself: a quota without a calendar, or a bucket with
//! one, cannot be made). An override's [`Size`] is given its policy's refill when applied.

use super::{QuotaCalendar, Rate};
use crate::limiter::{BucketSpec, Periods, SpecError};
use std::sync::Arc;

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
    /// All at once when a period of `calendar` ends (`spec` counts in one unending period).
    Quota {
        spec: BucketSpec,
        calendar: Arc<QuotaCalendar>,
    },
}

/// The limits an operator gives a caller (an override), before its policy's refill is known
/// (a reload may turn the policy into a quota or back): a bucket's own, or a count per the
/// policy's calendar period.
#[derive(Debug, Clone, PartialEq)]
pub enum Size {
    /// A bucket of these limits (made by [`Limits::new`]).
    Bucket(Arc<Limits>),
    /// A quota of this many tokens per period.
    Quota(u64),
}

impl Size {
    /// Burst size, or a quota's tokens per period.
    pub fn capacity(&self) -> u64 {
        match self {
            Self::Bucket(limits) => limits.capacity(),
            Self::Quota(count) => *count,
        }
    }
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

    /// A quota of `count` tokens per period of `calendar`.
    pub fn quota(count: u64, calendar: Arc<QuotaCalendar>) -> Result<Self, SpecError> {
        let spec = BucketSpec::quota(count as f64, Periods::unending())?;
        Ok(Self {
            capacity: count,
            refill: Refill::Quota { spec, calendar },
        })
    }

    /// The limits `size` gives under these (a policy's): a bucket's own, or a quota of its
    /// count in this quota's calendar; none when `size` is of the other kind (an override
    /// made before a reload turned the policy into a quota or back does not apply).
    pub fn resized(&self, size: &Size) -> Option<Arc<Limits>> {
        match (&self.refill, size) {
            (Refill::Rate { .. }, Size::Bucket(limits)) if !limits.is_quota() => {
                Some(limits.clone())
            }
            (Refill::Quota { .. }, Size::Quota(count)) => self.requota(*count)?.ok().map(Arc::new),
            _ => None,
        }
    }

    /// A quota of `count` tokens in this quota's calendar; `None` for a bucket.
    pub fn requota(&self, count: u64) -> Option<Result<Limits, SpecError>> {
        match &self.refill {
            Refill::Rate { .. } => None,
            Refill::Quota { calendar, .. } => Some(Self::quota(count, calendar.clone())),
        }
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

    /// A quota's calendar; `None` for a bucket.
    pub fn calendar(&self) -> Option<&QuotaCalendar> {
        match &self.refill {
            Refill::Rate { .. } => None,
            Refill::Quota { calendar, .. } => Some(calendar),
        }
    }

    /// The bucket shape these limits give each caller at `now_us` (Unix microseconds; only a
    /// quota reads it, in its calendar's periods).
    pub fn spec(&self, now_us: u64) -> BucketSpec {
        match &self.refill {
            Refill::Rate { spec, .. } => *spec,
            Refill::Quota { spec, calendar } => spec.in_periods(calendar.periods(now_us)),
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

    fn daily() -> Arc<QuotaCalendar> {
        let calendar = super::super::Calendar::new("day".parse().unwrap(), "UTC", "monday");
        Arc::new(QuotaCalendar::new(calendar.unwrap()))
    }

    #[test]
    fn the_window_is_the_time_to_refill_from_empty() {
        assert_eq!(limits(10, "10/s").window_seconds(), Some(1));
        assert_eq!(limits(1, "1/m").window_seconds(), Some(60));
        assert_eq!(limits(100, "1000/s").window_seconds(), Some(1));
        assert_eq!(limits(5, "2/s").window_seconds(), Some(3));
        assert_eq!(Limits::quota(50, daily()).unwrap().window_seconds(), None);
    }

    #[test]
    fn limits_that_would_lose_exactness_are_refused() {
        let rate = |r: &str| r.parse::<Rate>().unwrap();
        assert_eq!(Limits::new(10, rate("1e-300/s")), Err(SpecError::TooSlow));
        assert_eq!(Limits::new(0, rate("1/s")), Err(SpecError::Capacity));
        assert!(Limits::new(10, rate("1/d")).is_ok());
        assert_eq!(Limits::quota(0, daily()), Err(SpecError::Capacity));
    }

    #[test]
    fn an_override_takes_its_policys_refill_only_when_of_its_kind() {
        let bucket = Size::Bucket(Arc::new(limits(5, "1/s")));
        let quota = Size::Quota(50);
        let per_day = Limits::quota(100, daily()).unwrap();
        let resized = per_day.resized(&quota).unwrap();
        assert_eq!(resized.capacity(), 50);
        assert_eq!(resized.calendar(), per_day.calendar());
        assert_eq!(per_day.resized(&bucket), None);
        let per_second = limits(10, "10/s");
        assert_eq!(per_second.resized(&bucket).unwrap().capacity(), 5);
        assert_eq!(per_second.resized(&quota), None);
        assert_eq!((bucket.capacity(), quota.capacity()), (5, 50));
    }
}
