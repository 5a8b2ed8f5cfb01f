//! What a decision leaves behind to explain it: the policies a request met, in the order the
//! gate checked them, each with what it made of the request and what its bucket had left.
//! Every entry is written where the policy's outcome is counted (one call does both), so the
//! trail and the metrics cannot disagree. A few entries are kept inline, without allocating.

use crate::telemetry::{PolicyCounters, PolicyOutcome};
use smallvec::SmallVec;
use std::sync::Arc;

/// One policy a request met and what it made of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Checked<'g> {
    /// The policy's name (a rate limit service limit's name at that front door).
    pub policy: &'g Arc<str>,
    /// What the policy made of the request (the `decision` label it was counted under).
    pub outcome: PolicyOutcome,
    /// Tokens its bucket had left after the request; `None` where no bucket answered (a
    /// `deny`, `allow` or `challenge` policy, a refusal before the store, a store that
    /// could not decide).
    pub remaining: Option<f64>,
}

/// The policies a request met, in the order they were checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trail<'g>(SmallVec<[Checked<'g>; 4]>);

impl<'g> Trail<'g> {
    /// Counts `outcome` in `counters` and notes it for `policy`, with what its bucket had
    /// `remaining`.
    pub(super) fn note(
        &mut self,
        counters: &PolicyCounters,
        policy: &'g Arc<str>,
        outcome: PolicyOutcome,
        remaining: Option<f64>,
    ) {
        counters.count(outcome);
        self.0.push(Checked {
            policy,
            outcome,
            remaining,
        });
    }

    /// The entries, in order.
    pub fn checked(&self) -> &[Checked<'g>] {
        &self.0
    }

    /// Whether no policy was checked.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use crate::gate::tests::from_config;
    use crate::identity::Request;
    use crate::policy::RouteFacts;
    use crate::telemetry::PolicyOutcome::{self, *};
    use http::{HeaderMap, HeaderValue, Method};

    const POLICIES: &str = "
[[policy]]
name = \"per-ip\"
capacity = 2
rate = \"1/h\"

[[policy]]
name = \"no-curl\"
action = \"deny\"
shadow = true
match = { user_agent = \"curl\" }

[[policy]]
name = \"trial\"
capacity = 1
rate = \"1/h\"
shadow = true
";

    #[tokio::test]
    async fn the_trail_lists_each_policy_met_in_the_order_checked_with_its_outcome() {
        let gate = from_config(POLICIES);
        let mut headers = HeaderMap::new();
        headers.insert("user-agent", HeaderValue::from_static("curl/8"));
        let req = Request::new(&headers, None, "192.0.2.1".parse().ok(), None);
        let route = RouteFacts {
            method: &Method::GET,
            host: None,
            path: "/",
        };
        let mut trails = Vec::new();
        for _ in 0..3 {
            let decision = gate.decide(&req, &route).await;
            let trail: Vec<(String, PolicyOutcome, Option<u64>)> = decision
                .trail
                .checked()
                .iter()
                .map(|c| {
                    let left = c.remaining.map(|r| r.floor() as u64);
                    (c.policy.to_string(), c.outcome, left)
                })
                .collect();
            trails.push(trail);
        }
        let entry = |name: &str, outcome, left| (name.to_owned(), outcome, left);
        // The rules first (a shadow deny counts and goes on), then the limits in config order.
        assert_eq!(
            trails[0],
            [
                entry("no-curl", ShadowDenied, None),
                entry("per-ip", Allowed, Some(1)),
                entry("trial", Allowed, Some(0)),
            ]
        );
        assert_eq!(trails[1][2], entry("trial", ShadowThrottled, Some(0)));
        assert_eq!(
            trails[2][1..],
            [
                entry("per-ip", Throttled, Some(0)),
                entry("trial", ShadowThrottled, Some(0)),
            ]
        );
    }
}
