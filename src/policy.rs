//! Policies: which buckets a request takes from, and at what cost.

use crate::config::Rate;
use crate::limiter::BucketSpec;
use std::fmt;
use std::sync::Arc;

/// One named limit: a bucket per caller of `capacity` tokens refilled at `rate`.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// The name shown in headers, problem bodies and metric labels.
    pub name: Arc<str>,
    /// Burst size, in tokens.
    pub capacity: u64,
    /// Refill rate.
    pub rate: Rate,
    /// Tokens one request takes.
    pub cost: u64,
    /// Count what would be throttled but never block.
    pub shadow: bool,
}

impl Policy {
    /// A stable number for this policy's buckets, derived from its name so that it survives
    /// reordering of the config.
    pub fn id(&self) -> u64 {
        let digest = blake3::hash(self.name.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest.as_bytes()[..8]);
        u64::from_le_bytes(first)
    }

    /// The bucket shape this policy gives each caller.
    pub fn spec(&self) -> BucketSpec {
        BucketSpec {
            capacity: self.capacity as f64,
            rate_per_second: self.rate.per_second(),
        }
    }

    /// The window of the `RateLimit-Policy` header: seconds to refill an empty bucket, at
    /// least 1.
    pub fn window_seconds(&self) -> u64 {
        (self.capacity as f64 / self.rate.per_second())
            .ceil()
            .max(1.0) as u64
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: capacity {} refilled at {}, cost {}{}",
            self.name,
            self.capacity,
            self.rate,
            self.cost,
            if self.shadow { ", shadow" } else { "" }
        )
    }
}

/// The configured policies, in config order, with their bucket ids computed once.
#[derive(Debug, Clone)]
pub struct PolicySet {
    policies: Vec<(u64, Policy)>,
}

impl PolicySet {
    /// The set of `policies`.
    pub fn new(policies: Vec<Policy>) -> Self {
        Self {
            policies: policies.into_iter().map(|p| (p.id(), p)).collect(),
        }
    }

    /// The policies that apply to a request, with their bucket ids. Every policy applies to
    /// every request until policies learn to match routes.
    pub fn applicable(&self) -> impl Iterator<Item = (u64, &Policy)> {
        self.policies.iter().map(|(id, p)| (*id, p))
    }

    /// Whether no policy is configured.
    pub fn is_empty(&self) -> bool {
        self.policies.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(capacity: u64, rate: &str) -> Policy {
        Policy {
            name: "p".into(),
            capacity,
            rate: rate.parse().unwrap(),
            cost: 1,
            shadow: false,
        }
    }

    #[test]
    fn the_window_is_the_time_to_refill_from_empty() {
        assert_eq!(policy(10, "10/s").window_seconds(), 1);
        assert_eq!(policy(1, "1/m").window_seconds(), 60);
        assert_eq!(policy(100, "1000/s").window_seconds(), 1);
        assert_eq!(policy(5, "2/s").window_seconds(), 3);
    }

    #[test]
    fn the_id_depends_on_the_name_only() {
        assert_eq!(policy(10, "10/s").id(), policy(20, "1/s").id());
    }
}
