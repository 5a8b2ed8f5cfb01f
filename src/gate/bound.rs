//! A policy bound to its runtime parts: its counters and its levels (own limits, then one per
//! tier), and its share of one request once planned.

use super::{LevelId, Standing};
use crate::identity::{Identity, Request};
use crate::limiter::{Assessment, BucketKey, Mode, Take, Terms};
use crate::policy::{Limits, Policy};
use crate::telemetry::PolicyCounters;

pub(crate) struct BoundPolicy {
    pub(crate) policy: Policy,
    pub(crate) counters: PolicyCounters,
    index: usize,
    /// The policy's own limits first, then one per tier in `policy.tiers` order.
    levels: Vec<Limits>,
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
            counters,
            index,
            levels: std::iter::once(policy.limits.clone())
                .chain(tiers)
                .collect(),
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

    /// This policy's share of a request by `identity`.
    pub(crate) fn plan(&self, req: &Request<'_>, identity: Identity) -> Planned<'_> {
        Planned {
            bound: self,
            identity,
            level: self.level_for(req),
        }
    }
}

/// One applicable policy's share of a request: whose bucket, and how big.
pub struct Planned<'g> {
    bound: &'g BoundPolicy,
    identity: Identity,
    level: usize,
}

impl<'g> Planned<'g> {
    /// The bucket take this share asks the store for.
    pub(crate) fn take(&self) -> Take<'g> {
        Take {
            key: BucketKey {
                policy: &self.bound.policy.key,
                identity: self.identity,
            },
            spec: self.limits().spec(),
            cost: self.bound.policy.cost as f64,
            mode: match self.is_shadow() {
                true => Mode::Shadow,
                false => Mode::Enforce,
            },
            terms: Terms::default(),
        }
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

    pub(crate) fn counters(&self) -> &'g PolicyCounters {
        &self.bound.counters
    }
}
