//! When a request gets a challenge page instead of what the limits decided: a `challenge`
//! policy awaiting a request the limits let through, a dry bucket of a policy with
//! `on_limit = "challenge"`, or a CrowdSec `captcha` decision. Only page loads are
//! challenged, never verified crawlers, and never a request whose pass answers the challenge:
//! those get the ordinary answer.

use super::bound::BoundPolicy;
use super::ruling::{is_verified_crawler, note, Awaiting};
use super::trail::Trail;
use super::{Challenged, Gate, LevelId, LimitsOf, Outcome};
use crate::control::Block;
use crate::identity::{Bind, Challenge, ChallengeKind, Reach, Request, DEFAULT_DIFFICULTY};
use crate::limiter::Undecided;
use crate::policy::Policy;
use crate::telemetry::PolicyOutcome;
use std::sync::Arc;

/// The name CrowdSec's `captcha` challenges go by (its `policy` label).
pub const CROWDSEC: &str = "crowdsec";

/// The policy id CrowdSec's `captcha` challenges go by in their passes and the challenge
/// room's names: reserved for it (a policy's id is a digest of its name).
pub const CROWDSEC_ID: u64 = 0;

/// What a CrowdSec `captcha` decision gets: a `pow` challenge at the default difficulty,
/// its pass bound to the network.
pub(super) struct Captcha {
    pub(super) name: Arc<str>,
    pub(super) challenge: Challenge,
}

impl Default for Captcha {
    fn default() -> Self {
        Self {
            name: Arc::from(CROWDSEC),
            challenge: Challenge {
                kind: ChallengeKind::Pow {
                    difficulty: DEFAULT_DIFFICULTY,
                },
                bind: Bind::Network,
            },
        }
    }
}

impl Gate {
    /// Whether any policy challenges (by `action`, `on_limit` or `on_overload`).
    pub fn challenges(&self) -> bool {
        self.policies().any(challenges)
    }

    /// What the limits' `outcome` becomes for `req` when `awaiting` (a `challenge` policy
    /// the rules found) or a dry bucket's `on_limit` asks for a challenge.
    pub(super) fn challenge_after<'g>(
        &'g self,
        req: &Request<'_>,
        outcome: Outcome<'g>,
        awaiting: Option<Awaiting<'g>>,
        trail: &mut Trail<'g>,
    ) -> Outcome<'g> {
        match (outcome, awaiting) {
            (Outcome::Allowed(_, aftercare) | Outcome::Unlimited(aftercare), Some(awaiting)) => {
                awaited(awaiting, aftercare, trail)
            }
            // The store could not decide and lets requests through: the page needs no store.
            (Outcome::Undecided(Undecided::Pass), Some(awaiting)) => {
                awaited(awaiting, Default::default(), trail)
            }
            (Outcome::Throttled(decided), _) => {
                // The gate only draws on its own policies' limits.
                let LimitsOf::Policy(LevelId { policy, .. }) = decided.standing.level else {
                    return Outcome::Throttled(decided);
                };
                let bound = &self.policies[policy];
                match bound.policy.limit().and_then(|l| l.rules.on_limit.as_ref()) {
                    Some(challenge) if challengeable(req, challenge) => {
                        Outcome::Challenged(challenged(bound, challenge), Default::default())
                    }
                    _ => Outcome::Throttled(decided),
                }
            }
            (outcome, _) => outcome,
        }
    }

    /// What a CrowdSec decision `block` makes of `req`: `None` when a `captcha` decision's
    /// challenge is answered by the request's pass (the request goes on).
    pub(super) fn blocked_outcome<'g>(
        &'g self,
        req: &Request<'_>,
        block: Block,
    ) -> Option<Outcome<'g>> {
        use crate::control::Remedy;
        if block.remedy != Remedy::Challenge {
            return Some(Outcome::Blocked(block));
        }
        let captcha = &self.captcha;
        if req.pass().is_some_and(|p| p.satisfies(&captcha.challenge)) {
            return None;
        }
        match challengeable(req, &captcha.challenge) {
            true => Some(Outcome::Challenged(
                Challenged {
                    policy: &captcha.name,
                    policy_id: CROWDSEC_ID,
                    challenge: &captcha.challenge,
                },
                Default::default(),
            )),
            false => Some(Outcome::Blocked(block)),
        }
    }
}

/// Whether `req` may be shown `challenge`: a page load, not a verified crawler, and no pass
/// that answers it already.
fn challengeable(req: &Request<'_>, challenge: &Challenge) -> bool {
    req.reach() == Reach::Page
        && !is_verified_crawler(req)
        && !req.pass().is_some_and(|p| p.satisfies(challenge))
}

/// The challenge of the `challenge` policy `awaiting`, shown now (counted on `trail`);
/// `aftercare` is what the limits that paid still owe.
fn awaited<'g>(
    awaiting: Awaiting<'g>,
    aftercare: super::Aftercare,
    trail: &mut Trail<'g>,
) -> Outcome<'g> {
    note(trail, awaiting.bound, PolicyOutcome::Challenged);
    Outcome::Challenged(challenged(awaiting.bound, awaiting.challenge), aftercare)
}

fn challenged<'g>(bound: &'g BoundPolicy, challenge: &'g Challenge) -> Challenged<'g> {
    Challenged {
        policy: bound.policy.name(),
        policy_id: bound.policy.key.id(),
        challenge,
    }
}

#[cfg(test)]
mod tests;

/// The challenges `policy` may ask (by `action`, `on_limit` and `on_overload`).
pub fn asked(policy: &Policy) -> impl Iterator<Item = Challenge> + '_ {
    let on_limit = policy.limit().and_then(|l| l.rules.on_limit);
    let on_overload = policy.overload.on_overload;
    policy
        .action
        .challenge()
        .copied()
        .into_iter()
        .chain(on_limit)
        .chain(on_overload)
}

/// Whether `policy` may answer a request with its challenge (by `action`, `on_limit` or
/// `on_overload`).
pub fn challenges(policy: &Policy) -> bool {
    policy.action.challenge().is_some()
        || policy.limit().is_some_and(|l| l.rules.on_limit.is_some())
        || policy.overload.on_overload.is_some()
}
