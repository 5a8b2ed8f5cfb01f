//! A bucket's size and refill rate, checked once when the config is read: every policy and
//! tier holds one, and every bucket built from one keeps the arithmetic exact.

use super::Rate;
use crate::limiter::{BucketSpec, SpecError};

/// A bucket's size and refill rate.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    capacity: u64,
    rate: Rate,
    spec: BucketSpec,
}

impl Limits {
    /// Limits of `capacity` tokens refilled at `rate`, if a bucket can hold them exactly.
    pub fn new(capacity: u64, rate: Rate) -> Result<Self, SpecError> {
        let spec = BucketSpec::new(capacity as f64, rate.per_second())?;
        Ok(Self {
            capacity,
            rate,
            spec,
        })
    }

    /// Burst size, in tokens.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Refill rate.
    pub fn rate(&self) -> &Rate {
        &self.rate
    }

    /// The bucket shape these limits give each caller.
    pub fn spec(&self) -> BucketSpec {
        self.spec
    }

    /// The window of the `RateLimit-Policy` header: seconds to refill an empty bucket, at
    /// least 1.
    pub fn window_seconds(&self) -> u64 {
        (self.capacity as f64 / self.rate.per_second())
            .ceil()
            .max(1.0) as u64
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
        assert_eq!(limits(10, "10/s").window_seconds(), 1);
        assert_eq!(limits(1, "1/m").window_seconds(), 60);
        assert_eq!(limits(100, "1000/s").window_seconds(), 1);
        assert_eq!(limits(5, "2/s").window_seconds(), 3);
    }

    #[test]
    fn limits_that_would_lose_exactness_are_refused() {
        let rate = |r: &str| r.parse::<Rate>().unwrap();
        assert_eq!(Limits::new(10, rate("1e-300/s")), Err(SpecError::TooSlow));
        assert_eq!(Limits::new(0, rate("1/s")), Err(SpecError::Capacity));
        assert!(Limits::new(10, rate("1/d")).is_ok());
    }
}
