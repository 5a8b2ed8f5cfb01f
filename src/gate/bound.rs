//! A policy bound to its runtime parts: bucket id, counters, and per tier the limits with their
//! `RateLimit-Policy` header value, computed once.

use crate::identity::{Identity, Request};
use crate::limiter::{Assessment, Take};
use crate::metrics::PolicyCounters;
use crate::policy::{Limits, Policy};
use crate::respond::{self, Standing};
use http::HeaderValue;

/// One set of limits of a policy (its own, or a tier's).
pub(crate) struct Level {
    pub(crate) limits: Limits,
    pub(crate) policy_header: HeaderValue,
}

pub(crate) struct BoundPolicy {
    pub(crate) id: u64,
    pub(crate) policy: Policy,
    pub(crate) counters: PolicyCounters,
    /// The policy's own limits first, then one per tier in `policy.tiers` order.
    levels: Vec<Level>,
}

impl BoundPolicy {
    pub(crate) fn new(policy: &Policy, counters: PolicyCounters) -> Self {
        let own = std::iter::once(&policy.limits);
        let tiers = policy
            .tiers
            .iter()
            .flat_map(|t| t.levels.iter().map(|(_, l)| l));
        let levels = own
            .chain(tiers)
            .map(|limits| Level {
                limits: limits.clone(),
                policy_header: respond::policy_header_value(&policy.name, limits),
            })
            .collect();
        Self {
            id: policy.id(),
            policy: policy.clone(),
            counters,
            levels,
        }
    }

    /// The limits `req` gets: its tier's, or the policy's own.
    pub(crate) fn level_for(&self, req: &Request<'_>) -> &Level {
        let tier = self.policy.tiers.as_ref().and_then(|t| t.select_index(req));
        &self.levels[tier.map_or(0, |i| i + 1)]
    }
}

/// One applicable policy's share of a request: whose bucket, and how big.
pub struct Planned<'g> {
    pub(crate) bound: &'g BoundPolicy,
    pub(crate) identity: Identity,
    pub(crate) level: &'g Level,
}

impl Planned<'_> {
    pub(crate) fn take(&self) -> Take<'_> {
        Take {
            policy_id: self.bound.id,
            policy_name: &self.bound.policy.name,
            identity: self.identity,
            spec: self.level.limits.spec(),
            cost: self.bound.policy.cost as f64,
        }
    }

    pub(crate) fn standing(&self, assessment: Assessment) -> Standing<'_> {
        Standing {
            name: &self.bound.policy.name,
            limits: &self.level.limits,
            cost: self.bound.policy.cost,
            assessment,
        }
    }

    /// The caller whose bucket this is.
    pub fn identity(&self) -> Identity {
        self.identity
    }

    pub(crate) fn is_shadow(&self) -> bool {
        self.bound.policy.shadow
    }
}
