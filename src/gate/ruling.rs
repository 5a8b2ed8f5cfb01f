//! The `deny` and `allow` policies among those a request matches: an enforcing `deny` refuses
//! it, else an enforcing `allow` lets it past every limit; shadow ones are only counted. Both
//! come before any bucket, so neither takes a token.

use super::bound::BoundPolicy;
use super::Outcome;
use crate::policy::Action;
use crate::telemetry::Decision;

/// What the `deny` and `allow` policies in `matched` (in config order) make of the request:
/// `None` when it goes on to the limits. Counts every one of them that applied.
pub(super) fn rule<'g>(matched: &[&'g BoundPolicy]) -> Option<Outcome<'g>> {
    let mut allowed_by = None;
    let ruling = |action| matched.iter().filter(move |b| b.policy.action == action);
    for bound in ruling(Action::Deny) {
        if bound.policy.shadow {
            bound.counters.count(Decision::ShadowDenied);
        } else {
            bound.counters.count(Decision::Denied);
            return Some(Outcome::Denied(bound.policy.name()));
        }
    }
    for bound in ruling(Action::Allow) {
        if bound.policy.shadow {
            bound.counters.count(Decision::ShadowAllowed);
        } else if allowed_by.is_none() {
            bound.counters.count(Decision::AllowedByRule);
            allowed_by = Some(bound.policy.name());
        }
    }
    allowed_by.map(Outcome::AllowedByRule)
}

#[cfg(test)]
mod tests;
