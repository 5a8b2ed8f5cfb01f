//! A descriptor of a `ShouldRateLimit` request that met a limit: whose bucket, at what cost,
//! and how the gate takes and judges it.

use super::rules::Rule;
use crate::gate::{Draw, HeaderQuota, LimitsOf};
use crate::identity::Identity;
use crate::limiter::{BucketKey, Take, Terms};
use crate::telemetry::Metrics;
use std::sync::Arc;

/// A limited descriptor of the request.
pub(super) struct Limited {
    /// Its position among the request's descriptors.
    pub index: usize,
    /// Its limit.
    pub rule: Arc<Rule>,
    /// Whose bucket: the digest of the domain and the descriptor's entries.
    pub identity: Identity,
    /// Tokens it takes.
    pub cost: u64,
}

impl Limited {
    /// Its bucket's take, at its cost (part of the request's all-or-nothing set unless its
    /// limit is in shadow mode).
    pub(super) fn take(&self) -> Take<'_> {
        Take {
            key: BucketKey {
                policy: &self.rule.key,
                identity: self.identity,
            },
            spec: self.rule.limits.spec(0),
            cost: self.cost as f64,
            mode: self.rule.enforcement.mode(),
            terms: Terms::default(),
        }
    }

    /// Its bucket as the gate judges it, counted in `metrics` under its limit's name.
    pub(super) fn draw<'l>(&'l self, metrics: &Metrics) -> Draw<'l> {
        let rule = &self.rule;
        Draw {
            enforcement: rule.enforcement,
            counters: rule.counters.of(metrics, &rule.name),
            policy: &rule.arc_name,
            level: LimitsOf::Descriptor,
            quota: HeaderQuota::of(&rule.limits),
            calendar: None,
            cost: self.cost,
        }
    }
}
