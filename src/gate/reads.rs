//! What the gate works out only when a policy reads it: the bot score, the host.

use crate::identity::{Fact, IdentityChain, Source};
use crate::policy::Policy;

/// Whether `policy`'s `match` or `unless` reads the bot score.
pub(super) fn score(policy: &Policy) -> bool {
    policy.conditions.sender.reads_score()
        || policy
            .unless
            .as_ref()
            .is_some_and(|u| u.conditions.sender.reads_score())
}

/// Whether `policy` matches on the host or identifies callers (or tiers) by it.
pub(super) fn host(policy: &Policy) -> bool {
    let limit = policy.limit();
    let tier_by_host = limit
        .and_then(|l| l.tiers.as_ref())
        .is_some_and(|t| t.source == Source::Fact(Fact::Host));
    let unless_by_host = policy
        .unless
        .as_ref()
        .is_some_and(|u| u.route.host.is_some());
    policy.route.host.is_some()
        || unless_by_host
        || tier_by_host
        || limit
            .and_then(|l| l.sources.as_ref())
            .is_some_and(IdentityChain::uses_host)
}
