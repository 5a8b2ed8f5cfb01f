//! The `deny`, `allow` and `challenge` policies among those a request matches: an enforcing
//! `deny` refuses it, else an enforcing `allow` lets it past every limit, else an enforcing
//! `challenge` its pass does not answer awaits it behind the limits (a request that cannot show
//! a page gets the policy's 403 at once); shadow ones are only counted. None takes a token.

use super::bound::BoundPolicy;
use super::trail::Trail;
use super::Outcome;
use crate::identity::{Challenge, Reach, Request};
use crate::policy::Action;
use crate::telemetry::PolicyOutcome;

/// What the rules make of a request.
pub(super) enum Ruling<'g> {
    /// Decided before any bucket.
    Decided(Outcome<'g>),
    /// On to the limits; if they let the request through, this `challenge` policy answers it
    /// with its challenge page.
    Limits(Option<Awaiting<'g>>),
}

/// A `challenge` policy awaiting a request behind the limits, and its challenge.
#[derive(Clone, Copy)]
pub(super) struct Awaiting<'g> {
    pub(super) bound: &'g BoundPolicy,
    pub(super) challenge: &'g Challenge,
}

/// What the `deny`, `allow` and `challenge` policies in `matched` (in config order) make of
/// `req`. Counts every one of them that applied on `trail`, but the challenge that awaits
/// (counted when it is shown).
pub(super) fn rule<'g>(
    matched: &[&'g BoundPolicy],
    req: &Request<'_>,
    trail: &mut Trail<'g>,
) -> Ruling<'g> {
    let mut allowed_by = None;
    let ruling =
        |action: fn(&Action) -> bool| matched.iter().filter(move |b| action(&b.policy.action));
    for bound in ruling(|a| matches!(a, Action::Deny)) {
        if bound.policy.enforcement.is_shadow() {
            note(trail, bound, PolicyOutcome::ShadowDenied);
        } else {
            note(trail, bound, PolicyOutcome::Denied);
            return Ruling::Decided(Outcome::Denied(bound.policy.name()));
        }
    }
    for bound in ruling(|a| matches!(a, Action::Allow)) {
        if bound.policy.enforcement.is_shadow() {
            note(trail, bound, PolicyOutcome::ShadowAllowed);
        } else if allowed_by.is_none() {
            note(trail, bound, PolicyOutcome::AllowedByRule);
            allowed_by = Some(bound.policy.name());
        }
    }
    if let Some(name) = allowed_by {
        return Ruling::Decided(Outcome::AllowedByRule(name));
    }
    challenge(matched, req, trail)
}

/// The first enforcing `challenge` policy of `matched` that `req`'s pass does not answer.
/// Verified crawlers are never challenged.
fn challenge<'g>(
    matched: &[&'g BoundPolicy],
    req: &Request<'_>,
    trail: &mut Trail<'g>,
) -> Ruling<'g> {
    if is_verified_crawler(req) {
        return Ruling::Limits(None);
    }
    let unanswered = matched
        .iter()
        .filter_map(|&bound| match &bound.policy.action {
            Action::Challenge(challenge) if !req.pass().is_some_and(|p| p.satisfies(challenge)) => {
                Some(Awaiting { bound, challenge })
            }
            _ => None,
        });
    for awaiting in unanswered {
        let bound = awaiting.bound;
        if bound.policy.enforcement.is_shadow() {
            note(trail, bound, PolicyOutcome::ShadowChallenged);
        } else if req.reach() == Reach::NotAPage {
            note(trail, bound, PolicyOutcome::Denied);
            return Ruling::Decided(Outcome::Denied(bound.policy.name()));
        } else {
            return Ruling::Limits(Some(awaiting));
        }
    }
    Ruling::Limits(None)
}

/// Counts `outcome` of `bound` (which has no bucket) on `trail`.
pub(super) fn note<'g>(trail: &mut Trail<'g>, bound: &'g BoundPolicy, outcome: PolicyOutcome) {
    trail.note(&bound.counters, bound.policy.name(), outcome, None);
}

/// Whether `req` comes from a crawler whose claim was verified.
pub(super) fn is_verified_crawler(req: &Request<'_>) -> bool {
    req.traits().bot.as_ref().is_some_and(|b| b.verified())
}

#[cfg(test)]
mod tests;
