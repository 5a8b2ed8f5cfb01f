//! Policies: which requests they apply to (`route`), whose bucket (their identity chain), how
//! big and how fast it refills (`tier`), and what a request costs.

mod path;
mod route;
mod tier;

pub use path::{normalize_path, PathError};
pub use route::{request_host, Route, RouteFacts};
pub use tier::{Limits, Tiers};

use crate::identity::IdentityChain;
use crate::limiter::BucketSpec;
use std::fmt;
use std::sync::Arc;

/// One named limit: a bucket per caller, refilled continuously.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// The name shown in headers, problem bodies and metric labels.
    pub name: Arc<str>,
    /// Capacity and rate when no tier applies.
    pub limits: Limits,
    /// Tokens one request takes.
    pub cost: u64,
    /// Count what would be throttled but never block.
    pub shadow: bool,
    /// The requests this policy applies to.
    pub route: Route,
    /// This policy's own identity chain, instead of the global one.
    pub sources: Option<IdentityChain>,
    /// Limits chosen by a value of the request.
    pub tiers: Option<Tiers>,
}

impl Policy {
    /// A stable number for this policy's buckets, derived from its name so that it survives
    /// reordering of the config and reloads.
    pub fn id(&self) -> u64 {
        let digest = blake3::hash(self.name.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest.as_bytes()[..8]);
        u64::from_le_bytes(first)
    }
}

impl Limits {
    /// The bucket shape these limits give each caller.
    pub fn spec(&self) -> BucketSpec {
        BucketSpec {
            capacity: self.capacity as f64,
            rate_per_second: self.rate.per_second(),
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: capacity {} refilled at {}, cost {}{}; applies to {}",
            self.name,
            self.limits.capacity,
            self.limits.rate,
            self.cost,
            if self.shadow { ", shadow" } else { "" },
            self.route
        )?;
        if let Some(chain) = &self.sources {
            write!(f, "; callers by {chain}")?;
        }
        if let Some(tiers) = &self.tiers {
            let levels: Vec<String> = tiers
                .levels
                .iter()
                .map(|(name, l)| format!("{name} = {} at {}", l.capacity, l.rate))
                .collect();
            write!(f, "; tiers by {}: {}", tiers.source, levels.join(", "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(capacity: u64, rate: &str) -> Limits {
        Limits {
            capacity,
            rate: rate.parse().unwrap(),
        }
    }

    #[test]
    fn the_window_is_the_time_to_refill_from_empty() {
        assert_eq!(limits(10, "10/s").window_seconds(), 1);
        assert_eq!(limits(1, "1/m").window_seconds(), 60);
        assert_eq!(limits(100, "1000/s").window_seconds(), 1);
        assert_eq!(limits(5, "2/s").window_seconds(), 3);
    }

    #[test]
    fn the_id_depends_on_the_name_only() {
        let policy = |capacity| Policy {
            name: "p".into(),
            limits: limits(capacity, "1/s"),
            cost: 1,
            shadow: false,
            route: Route::default(),
            sources: None,
            tiers: None,
        };
        assert_eq!(policy(10).id(), policy(20).id());
    }
}
