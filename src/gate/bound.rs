//! A policy bound to its runtime parts: its counters, its levels (own limits, then one per
//! tier) and its held requests, and its share of one request once planned (whose bucket, at
//! what cost).

use super::cost::{header_cost, BadCost, HeaderCost};
use super::judge::Draw;
use super::{HeaderQuota, LevelId, LimitsOf, Unpayable};
use crate::clock::Clock;
use crate::control::{override_key, Applied};
use crate::identity::{Identified, Identity, Request, SourceSpec};
use crate::limiter::{BucketKey, PolicyKey, Take};
use crate::policy::{Enforcement, Limit, Limits, Policy, Rules};
use crate::telemetry::PolicyCounters;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

pub(crate) struct BoundPolicy {
    pub(crate) policy: Policy,
    pub(crate) counters: Arc<PolicyCounters>,
    index: usize,
    /// A `limit` policy's own limits first, then one per tier in `tiers` order (none for a
    /// policy of another action).
    levels: Vec<Limits>,
    /// Requests held now under this policy on this instance (at most `max_held`).
    pub(crate) held: AtomicUsize,
    /// The buckets of callers whose limits an override replaces.
    override_key: PolicyKey,
}

impl BoundPolicy {
    /// The policy at position `index` of the config, counting into `counters`.
    pub(crate) fn new(index: usize, policy: &Policy, counters: PolicyCounters) -> Self {
        let levels = policy.limit().into_iter().flat_map(|limit| {
            let tiers = limit.tiers.iter().flat_map(|t| &t.levels);
            std::iter::once(&limit.limits).chain(tiers.map(|(_, l)| l))
        });
        Self {
            policy: policy.clone(),
            counters: Arc::new(counters),
            index,
            levels: levels.cloned().collect(),
            held: AtomicUsize::new(0),
            override_key: override_key(policy.name()),
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

    /// The level `req` gets under `limit`: its tier's, or the policy's own.
    fn level_for(limit: &Limit, req: &Request<'_>) -> usize {
        let tier = limit.tiers.as_ref().and_then(|t| t.select_index(req));
        tier.map_or(0, |i| i + 1)
    }

    /// This `limit` policy's share of a request by the caller `found`, whose limits
    /// `overridden` replaces when an operator said so; fails on a bad `cost_header`.
    pub(crate) fn plan<'g>(
        &'g self,
        limit: &'g Limit,
        req: &Request<'_>,
        found: Identified<'g>,
        overridden: Option<Arc<Applied>>,
    ) -> Result<Planned<'g>, BadCost> {
        // An override made for the other kind of limits (before a reload turned the policy
        // into a quota or back) does not apply; a quota's counts in the policy's calendar.
        let overridden = overridden.and_then(|a| limit.limits.resized(&a.size));
        let level = match overridden {
            Some(_) => LevelId::OVERRIDE,
            None => Self::level_for(limit, req),
        };
        let mut planned = Planned {
            bound: self,
            limit,
            identity: found.identity,
            source: found.source,
            level,
            overridden,
            cost: limit.cost,
        };
        planned.cost = self.cost_of(limit, req, planned.limits().capacity())?;
        Ok(planned)
    }

    /// The request's cost: its `cost_header`, else the policy's `cost`.
    fn cost_of(&self, limit: &Limit, req: &Request<'_>, capacity: u64) -> Result<u64, BadCost> {
        let Some(header) = &limit.rules.cost_header else {
            return Ok(limit.cost);
        };
        match header_cost(req.headers.get(header), capacity) {
            HeaderCost::Absent => Ok(limit.cost),
            HeaderCost::Valid(cost) => Ok(cost),
            // A shadow policy never refuses: a bad header costs what the policy says.
            HeaderCost::Invalid if self.policy.enforcement.is_shadow() => Ok(limit.cost),
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
    /// The policy's bucket and its terms.
    limit: &'g Limit,
    identity: Identity,
    /// The source that named the caller (`None`: anonymous).
    source: Option<&'g SourceSpec>,
    level: usize,
    /// The caller's limits under this policy while an override lasts, if an operator made
    /// one.
    overridden: Option<Arc<Limits>>,
    cost: u64,
}

impl<'g> Planned<'g> {
    /// The caller under this policy: what its concurrency slots count against.
    pub(crate) fn key(&self) -> BucketKey<'g> {
        BucketKey {
            policy: &self.bound.policy.key,
            identity: self.identity,
        }
    }

    /// The bucket this share draws on: the caller's, or while an override lasts the one it
    /// has under the override (filled when the override is made).
    pub(crate) fn bucket(&self) -> BucketKey<'g> {
        let policy = match self.overridden {
            Some(_) => &self.bound.override_key,
            None => &self.bound.policy.key,
        };
        BucketKey {
            policy,
            identity: self.identity,
        }
    }

    /// The bucket take this share asks the store for; a `holdable` one may prepay within
    /// the policy's `max_delay`; a quota's period is the one `clock` stands in.
    pub(crate) fn take(&self, holdable: bool, clock: &Clock) -> Take<'g> {
        let limits = self.limits();
        // Only a quota reads the wall clock.
        let now_us = limits.calendar().map_or(0, |_| clock.now_us());
        let spec = limits.spec(now_us);
        Take {
            key: self.bucket(),
            spec,
            cost: self.cost as f64,
            mode: self.enforcement().mode(),
            terms: self.rules().terms(&spec, holdable && !self.is_shadow()),
        }
    }

    /// The refusal of this share when it can never be paid, about `caller`.
    pub(crate) fn unpayable_refusal(&self, caller: Identity) -> Unpayable<'g> {
        Unpayable {
            policy: self.bound.policy.name(),
            level: self.level_id(),
            quota: HeaderQuota::of(self.limits()),
            cost: self.cost,
            identity: self.identity,
            source: self.source,
            caller,
        }
    }

    /// The policy's rules.
    pub(crate) fn rules(&self) -> &'g Rules {
        &self.limit.rules
    }

    /// The policy's bucket and its terms.
    pub(crate) fn limit(&self) -> &'g Limit {
        self.limit
    }

    /// The policy, bound.
    pub(crate) fn bound(&self) -> &'g BoundPolicy {
        self.bound
    }

    fn limits(&self) -> &Limits {
        match &self.overridden {
            Some(limits) => limits,
            None => &self.bound.levels[self.level],
        }
    }

    /// This share as the store's answer is judged.
    pub(crate) fn draw(&self) -> Draw<'g> {
        Draw {
            enforcement: self.enforcement(),
            counters: self.counters(),
            policy: self.bound.policy.name(),
            level: self.level_id(),
            quota: HeaderQuota::of(self.limits()),
            calendar: self.limit.calendar(),
            cost: self.cost,
        }
    }

    fn level_id(&self) -> LimitsOf {
        LimitsOf::Policy(LevelId {
            policy: self.bound.index,
            level: self.level,
        })
    }

    /// The caller whose bucket this is.
    pub fn identity(&self) -> Identity {
        self.identity
    }

    /// The source that named the caller (`None`: the anonymous caller).
    pub fn source(&self) -> Option<&'g SourceSpec> {
        self.source
    }

    pub(crate) fn is_shadow(&self) -> bool {
        self.enforcement().is_shadow()
    }

    /// Whether the policy refuses, or only counts.
    pub(crate) fn enforcement(&self) -> Enforcement {
        self.bound.policy.enforcement
    }

    pub(crate) fn counters(&self) -> &'g PolicyCounters {
        &self.bound.counters
    }
}
