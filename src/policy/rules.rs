//! What a policy does beyond its bucket: where a request's cost comes from, how the response
//! settles it, how many requests of one caller may run at once, whether a request waits
//! instead of being refused, and the penalty for a refusal.

use crate::identity::Challenge;
use crate::limiter::{BucketSpec, Terms};
use http::HeaderName;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// How the response settles what a request reserved up front.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settle {
    /// `count_status`: the tokens count only when the response status is one of these; the
    /// others are refunded.
    CountStatus(Arc<[u16]>),
    /// `settle_header`: this response header (or trailer) says what the request used; the
    /// difference from what it reserved is refunded or charged.
    Header(HeaderName),
}

/// `max_delay`: holding a request whose tokens come soon instead of refusing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shaping {
    /// The longest a request is held.
    pub max_delay: Duration,
    /// The most requests held at once under the policy, on one instance.
    pub max_held: usize,
}

/// The policy keys of issue 16; none set is a plain bucket.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rules {
    /// `cost_header`: a request header that sets the request's cost.
    pub cost_header: Option<HeaderName>,
    /// `count_status` or `settle_header`.
    pub settle: Option<Settle>,
    /// `max_in_flight`: the most concurrent requests of one caller.
    pub max_in_flight: Option<u32>,
    /// `max_delay` and `max_held`.
    pub shaping: Option<Shaping>,
    /// `block_for`: how long a refusal keeps the caller refused.
    pub block_for: Option<Duration>,
    /// `on_limit = "challenge"`: a page load the bucket cannot pay for gets this challenge
    /// instead of a 429 (unless its pass already answers it).
    pub on_limit: Option<Challenge>,
}

impl Rules {
    /// The terms of a take from a bucket shaped `spec`: an overdraft of rate × `max_delay`
    /// when the request may be held (`holdable`), and the penalty.
    pub fn terms(&self, spec: &BucketSpec, holdable: bool) -> Terms {
        let overdraft = match (self.shaping, holdable) {
            (Some(s), true) => spec.rate_per_second() * s.max_delay.as_secs_f64(),
            _ => 0.0,
        };
        Terms {
            overdraft,
            block_us: self.block_for.map_or(0, |d| d.as_micros() as u64),
        }
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(header) = &self.cost_header {
            write!(f, "; cost from {header}")?;
        }
        match &self.settle {
            Some(Settle::CountStatus(statuses)) => {
                let list: Vec<String> = statuses.iter().map(u16::to_string).collect();
                write!(f, "; counts only statuses {}", list.join(", "))?;
            }
            Some(Settle::Header(header)) => write!(f, "; reserves, then settles by {header}")?,
            None => {}
        }
        if let Some(n) = self.max_in_flight {
            write!(f, "; at most {n} in flight per caller")?;
        }
        if let Some(s) = self.shaping {
            write!(
                f,
                "; holds up to {:?} ({} at once)",
                s.max_delay, s.max_held
            )?;
        }
        if let Some(d) = self.block_for {
            write!(f, "; blocks {d:?} after a refusal")?;
        }
        if let Some(challenge) = self.on_limit {
            write!(f, "; once dry, page loads get a challenge ({challenge})")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overdraft_is_what_refills_within_max_delay() {
        let spec = BucketSpec::new(1.0, 5.0).unwrap();
        let rules = Rules {
            shaping: Some(Shaping {
                max_delay: Duration::from_millis(200),
                max_held: 10,
            }),
            block_for: Some(Duration::from_secs(3)),
            ..Rules::default()
        };
        let terms = rules.terms(&spec, true);
        assert!((terms.overdraft - 1.0).abs() < 1e-12);
        assert_eq!(terms.block_us, 3_000_000);
        assert_eq!(rules.terms(&spec, false).overdraft, 0.0, "not holdable");
        assert_eq!(Rules::default().terms(&spec, true), Terms::default());
    }
}
