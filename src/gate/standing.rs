//! How a policy's bucket stands after a request, which standing describes the request, and
//! which caller the request is about ([`stable_caller`]).

use super::Planned;
use crate::identity::Identity;
use crate::limiter::Assessment;
use crate::policy::{Limits, QuotaCalendar};
use std::sync::Arc;

/// Which limits of which policy: the policy's position in the config, and 0 for its own
/// limits or 1 + the tier's position. The proxy precomputes what it says per level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LevelId {
    /// The policy's position in the config.
    pub policy: usize,
    /// 0 for the policy's own limits, 1 + i for its i-th tier, [`LevelId::OVERRIDE`] for a
    /// caller's override.
    pub level: usize,
}

impl LevelId {
    /// The level of limits an operator's override gave one caller (nothing is precomputed for
    /// it).
    pub const OVERRIDE: usize = usize::MAX;
}

/// Whose limits a bucket is drawn under: a level of one of the proxy's policies, or a limit
/// of the rate limit service's descriptors (which is no policy's, and has no level).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LimitsOf {
    /// A level of a policy of the gate's (its `RateLimit-Policy` value precomputed, but for an
    /// override's).
    Policy(LevelId),
    /// A descriptor's limit in the rate limit service (its value made from its quota).
    Descriptor,
}

/// What the `RateLimit-Policy` header says of a bucket: its quota (`q`) and window (`w`).
/// Not a calendar quota (`QuotaCalendar`): any bucket has one, a calendar quota's without a
/// window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderQuota {
    /// The bucket's capacity (a calendar quota's tokens per period).
    pub capacity: u64,
    /// Seconds to refill it from empty (at least 1); none for a calendar quota, whose period
    /// has no fixed width.
    pub window_seconds: Option<u64>,
}

impl HeaderQuota {
    /// The header's quota and window of `limits`.
    pub fn of(limits: &Limits) -> Self {
        Self {
            capacity: limits.capacity(),
            window_seconds: limits.window_seconds(),
        }
    }
}

/// One policy's bucket, as a request left it.
#[derive(Debug, Clone, Copy)]
pub struct Standing<'g> {
    /// The policy's name.
    pub policy: &'g Arc<str>,
    /// Which limits applied.
    pub level: LimitsOf,
    /// The quota of the caller's bucket (the policy's, its tier's or the caller's override).
    pub quota: HeaderQuota,
    /// A calendar quota's calendar (when it resets); `None` for a bucket.
    pub calendar: Option<&'g QuotaCalendar>,
    /// Tokens the request takes.
    pub cost: u64,
    /// The bucket's answer for this request.
    pub assessment: Assessment,
}

impl Standing<'_> {
    /// How many more requests of this cost the bucket allows now.
    pub fn requests_left(&self) -> u64 {
        (self.assessment.remaining() / self.cost as f64).floor() as u64
    }
}

/// The index of the standing that describes a request: among refusing policies the one that
/// makes the client wait longest; if none refused, the one with the fewest requests left
/// (then the one slowest to refill).
pub fn most_restrictive(standings: &[Standing<'_>]) -> Option<usize> {
    let indexed = standings.iter().enumerate();
    let refused = indexed
        .clone()
        .filter(|(_, s)| !s.assessment.is_allowed())
        .max_by_key(|(_, s)| s.assessment.wait_us());
    refused
        .or_else(|| {
            indexed.min_by(|(_, a), (_, b)| {
                a.requests_left()
                    .cmp(&b.requests_left())
                    .then(b.assessment.full_in_us().cmp(&a.assessment.full_in_us()))
            })
        })
        .map(|(i, _)| i)
}

/// The caller of a request, the same on each of the caller's requests whichever policy is the
/// most restrictive: the identity of the first planned policy (in config order) that takes its
/// caller from `[identity] sources` (has no `sources` of its own), else the first planned
/// policy's. A policy with its own `const:` or fact sources listed before it does not make
/// every caller one. `None` when nothing was planned.
pub(super) fn stable_caller(planned: &[Planned<'_>]) -> Option<Identity> {
    planned
        .iter()
        .find(|p| p.limit().sources.is_none())
        .or(planned.first())
        .map(Planned::identity)
}

/// The standings the gate's tests build (here and in reply/tests.rs).
#[cfg(test)]
pub(super) mod fixtures {
    use super::*;
    use crate::limiter::Penalty;

    pub(crate) fn limits(capacity: u64, rate: &str) -> Limits {
        Limits::new(capacity, rate.parse().unwrap()).unwrap()
    }

    pub(crate) fn standing<'a>(
        name: &'a Arc<str>,
        limits: &'a Limits,
        a: Assessment,
    ) -> Standing<'a> {
        Standing {
            policy: name,
            level: LimitsOf::Policy(LevelId {
                policy: 0,
                level: 0,
            }),
            quota: HeaderQuota::of(limits),
            calendar: None,
            cost: 1,
            assessment: a,
        }
    }

    pub(crate) fn assessment(
        allowed: bool,
        remaining: f64,
        retry_after_us: u64,
        full_in_us: u64,
    ) -> Assessment {
        match allowed {
            true => Assessment::allowed(remaining, retry_after_us, full_in_us),
            false => Assessment::refused(remaining, retry_after_us, full_in_us, Penalty::None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{assessment, limits, standing};
    use super::*;

    #[test]
    fn the_refusal_with_the_longest_wait_is_described() {
        let l = limits(10, "1/s");
        let name: Arc<str> = "p".into();
        let standings = [
            standing(&name, &l, assessment(true, 9.0, 0, 1)),
            standing(&name, &l, assessment(false, 0.0, 5, 9)),
            standing(&name, &l, assessment(false, 0.0, 50, 9)),
        ];
        assert_eq!(most_restrictive(&standings), Some(2));
    }

    #[test]
    fn when_all_pass_the_fewest_requests_left_is_described() {
        let (wide, narrow) = (limits(100, "1/s"), limits(10, "1/s"));
        let name: Arc<str> = "p".into();
        let standings = [
            standing(&name, &wide, assessment(true, 50.0, 0, 1)),
            standing(&name, &narrow, assessment(true, 3.0, 0, 1)),
        ];
        assert_eq!(most_restrictive(&standings), Some(1));
        assert!(most_restrictive(&[]).is_none());
    }

    /// A gate on the memory store: `[identity]` reads `x-api-key`; "everyone" (listed first,
    /// its own `const:` source) becomes the most restrictive policy once others drained it.
    fn two_policy_gate() -> crate::gate::Gate {
        let text = "[server]\nlisten = \"127.0.0.1:8080\"\n\n\
                    [upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n\
                    [identity]\nsources = [\"header:x-api-key\"]\n\n\
                    [[policy]]\nname = \"everyone\"\ncapacity = 150\nrate = \"1/h\"\n\
                    sources = [\"const:all\"]\n\n\
                    [[policy]]\nname = \"per-key\"\ncapacity = 100\nrate = \"1/h\"\n";
        let config = crate::config::parse(text, std::path::Path::new("t.toml")).unwrap();
        let limiter = Arc::new(crate::limiter::MemoryStore::new(1000));
        let deciders = crate::gate::Deciders {
            control: Arc::new(crate::control::Control::in_process(limiter.clone())),
            limiter,
            in_flight: Arc::new(crate::limiter::MemorySlots::new()),
            fallback: crate::limiter::Fallback::Deny,
            clock: crate::clock::Clock::System,
        };
        crate::gate::Gate::new(
            config.access.clone(),
            &config.policies,
            config.identity.clone(),
            crate::identity::IdentityKey::from_bytes([7; 32]),
            deciders,
            &crate::telemetry::Metrics::new(),
        )
    }

    #[tokio::test]
    async fn the_caller_stays_the_same_whichever_policy_decides() {
        let gate = two_policy_gate();
        let route = crate::policy::RouteFacts {
            method: &http::Method::GET,
            host: None,
            path: "/",
        };
        let ticket = |key: &'static str| {
            let gate = &gate;
            let route = &route;
            async move {
                let mut headers = http::HeaderMap::new();
                headers.insert("x-api-key", http::HeaderValue::from_static(key));
                let req = crate::identity::Request::new(&headers, None, None, None);
                gate.decide(&req, route).await.outcome.ticket().unwrap()
            }
        };
        let first = ticket("alice").await;
        assert_eq!(&*first.policy, "per-key");
        for _ in 0..80 {
            assert_ne!(ticket("bob").await.caller, first.caller);
        }
        let later = ticket("alice").await;
        assert_eq!(&*later.policy, "everyone");
        assert_ne!(
            later.identity, first.identity,
            "another policy's bucket decides"
        );
        assert_eq!(later.caller, first.caller, "the same caller");
    }
}
