//! A policy bound to its runtime parts: its counters, its levels (own limits, then one per
//! tier) and its held requests, and its share of one request once planned (whose bucket, at
//! what cost).

use super::cost::{header_cost, BadCost, HeaderCost};
use super::{LevelId, Standing};
use crate::identity::{Identity, Request};
use crate::limiter::{Assessment, BucketKey, Mode, Take};
use crate::policy::{Limits, Policy, Rules};
use crate::telemetry::PolicyCounters;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

pub(crate) struct BoundPolicy {
    pub(crate) policy: Policy,
    pub(crate) counters: Arc<PolicyCounters>,
    index: usize,
    /// The policy's own limits first, then one per tier in `policy.tiers` order.
    levels: Vec<Limits>,
    /// Requests held now under this policy on this instance (at most `max_held`).
    pub(crate) held: AtomicUsize,
}

impl BoundPolicy {
    /// The policy at position `index` of the config, counting into `counters`.
    pub(crate) fn new(index: usize, policy: &Policy, counters: PolicyCounters) -> Self {
        let tiers = policy
            .tiers
            .iter()
            .flat_map(|t| t.levels.iter().map(|(_, l)| l.clone()));
        Self {
            policy: policy.clone(),
            counters: Arc::new(counters),
            index,
            levels: std::iter::once(policy.limits.clone())
                .chain(tiers)
                .collect(),
            held: AtomicUsize::new(0),
        }
    }

    /// Every level of this policy with its id.
    pub(crate) fn levels(&self) -> impl Iterator<Item = (LevelId, &Limits)> {
        self.levels.iter().enumerate().map(|(level, limits)| {
            let id = LevelId {
                policy: self.index,
                level,
            };
            (id, limits)
        })
    }

    /// The level `req` gets: its tier's, or the policy's own.
    fn level_for(&self, req: &Request<'_>) -> usize {
        let tier = self.policy.tiers.as_ref().and_then(|t| t.select_index(req));
        tier.map_or(0, |i| i + 1)
    }

    /// This policy's share of a request by `identity`; fails on a bad `cost_header`.
    pub(crate) fn plan(
        &self,
        req: &Request<'_>,
        identity: Identity,
    ) -> Result<Planned<'_>, BadCost> {
        let level = self.level_for(req);
        Ok(Planned {
            bound: self,
            identity,
            level,
            cost: self.cost_of(req, level)?,
        })
    }

    /// The request's cost: its `cost_header`, else the policy's `cost`.
    fn cost_of(&self, req: &Request<'_>, level: usize) -> Result<u64, BadCost> {
        let Some(header) = &self.policy.rules.cost_header else {
            return Ok(self.policy.cost);
        };
        let capacity = self.levels[level].capacity();
        match header_cost(req.headers.get(header), capacity) {
            HeaderCost::Absent => Ok(self.policy.cost),
            HeaderCost::Valid(cost) => Ok(cost),
            // A shadow policy never refuses: a bad header costs what the policy says.
            HeaderCost::Invalid if self.policy.shadow => Ok(self.policy.cost),
            HeaderCost::Invalid => Err(BadCost {
                policy: self.policy.name().clone(),
                header: header.clone(),
                capacity,
            }),
        }
    }
}

/// One applicable policy's share of a request: whose bucket, how big, at what cost.
pub struct Planned<'g> {
    bound: &'g BoundPolicy,
    identity: Identity,
    level: usize,
    cost: u64,
}

impl<'g> Planned<'g> {
    /// The bucket this share draws on.
    pub(crate) fn key(&self) -> BucketKey<'g> {
        BucketKey {
            policy: &self.bound.policy.key,
            identity: self.identity,
        }
    }

    /// The bucket take this share asks the store for; a `holdable` one may prepay within
    /// the policy's `max_delay`.
    pub(crate) fn take(&self, holdable: bool) -> Take<'g> {
        let spec = self.limits().spec();
        Take {
            key: self.key(),
            spec,
            cost: self.cost as f64,
            mode: match self.is_shadow() {
                true => Mode::Shadow,
                false => Mode::Enforce,
            },
            terms: self.rules().terms(&spec, holdable && !self.is_shadow()),
        }
    }

    /// The policy's rules.
    pub(crate) fn rules(&self) -> &'g Rules {
        &self.bound.policy.rules
    }

    /// The policy, bound.
    pub(crate) fn bound(&self) -> &'g BoundPolicy {
        self.bound
    }

    fn limits(&self) -> &'g Limits {
        &self.bound.levels[self.level]
    }

    /// How the bucket stands given the store's `assessment`.
    pub(crate) fn standing(&self, assessment: Assessment) -> Standing<'g> {
        Standing {
            policy: self.bound.policy.name(),
            level: LevelId {
                policy: self.bound.index,
                level: self.level,
            },
            limits: self.limits(),
            cost: self.cost,
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

    pub(crate) fn counters(&self) -> &'g PolicyCounters {
        &self.bound.counters
    }
}
