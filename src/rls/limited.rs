//! A descriptor of a `ShouldRateLimit` request that met a limit: whose bucket, at what cost.

use super::rules::Rule;
use crate::identity::Identity;
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
    /// Whether its limit can never admit it: an enforcing limit whose capacity is below the
    /// cost (a shadow limit never refuses).
    pub(super) fn unpayable(&self) -> bool {
        !self.rule.shadow && self.cost > self.rule.limits.capacity()
    }
}
