//! The `deny`, `allow` and `challenge` policies among those a request matches: an enforcing
//! `deny` refuses it, else an enforcing `allow` lets it past every limit, else an enforcing
//! `challenge` its pass does not answer awaits it behind the limits (a request that cannot show
//! a page gets the policy's 403 at once); shadow ones are only counted. None takes a token.

use super::bound::BoundPolicy;
use super::Outcome;
use crate::identity::{Reach, Request};
use crate::policy::Action;
use crate::telemetry::Decision;

/// What the rules make of a request.
pub(super) enum Ruling<'g> {
    /// Decided before any bucket.
    Decided(Outcome<'g>),
    /// On to the limits; if they let the request through, this `challenge` policy answers it
    /// with its challenge page.
    Limits(Option<&'g BoundPolicy>),
}

/// What the `deny`, `allow` and `challenge` policies in `matched` (in config order) make of
/// `req`. Counts every one of them that applied, but the challenge that awaits (counted when
/// it is shown).
pub(super) fn rule<'g>(matched: &[&'g BoundPolicy], req: &Request<'_>) -> Ruling<'g> {
    let mut allowed_by = None;
    let ruling = |action: Action| matched.iter().filter(move |b| b.policy.action == action);
    for bound in ruling(Action::Deny) {
        if bound.policy.shadow {
            bound.counters.count(Decision::ShadowDenied);
        } else {
            bound.counters.count(Decision::Denied);
            return Ruling::Decided(Outcome::Denied(bound.policy.name()));
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
    if let Some(name) = allowed_by {
        return Ruling::Decided(Outcome::AllowedByRule(name));
    }
    challenge(matched, req)
}

/// The first enforcing `challenge` policy of `matched` that `req`'s pass does not answer.
/// Verified crawlers are never challenged.
fn challenge<'g>(matched: &[&'g BoundPolicy], req: &Request<'_>) -> Ruling<'g> {
    if is_verified_crawler(req) {
        return Ruling::Limits(None);
    }
    let unanswered = matched.iter().filter(|b| match b.policy.action {
        Action::Challenge(challenge) => !req.pass().is_some_and(|p| p.satisfies(&challenge)),
        _ => false,
    });
    for bound in unanswered {
        if bound.policy.shadow {
            bound.counters.count(Decision::ShadowChallenged);
        } else if req.reach() == Reach::NotAPage {
            bound.counters.count(Decision::Denied);
            return Ruling::Decided(Outcome::Denied(bound.policy.name()));
        } else {
            return Ruling::Limits(Some(bound));
        }
    }
    Ruling::Limits(None)
}

/// Whether `req` comes from a crawler whose claim was verified.
pub(super) fn is_verified_crawler(req: &Request<'_>) -> bool {
    req.traits().bot.as_ref().is_some_and(|b| b.verified())
}

#[cfg(test)]
mod tests;
