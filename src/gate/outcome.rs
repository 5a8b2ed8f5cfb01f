//! What the gate decided about a request: a typed outcome with no HTTP in it. The proxy
//! renders it; what later phases need travels in the [`Ticket`] and the [`Aftercare`].

use super::{Aftercare, BadCost, HeaderQuota, LimitsOf, Standing};
use crate::control::{BanHit, Block, Remedy};
use crate::identity::{Challenge, Identity, SourceSpec, Trapped};
use crate::limiter::Undecided;
use crate::telemetry::AccessList;
use std::sync::Arc;

/// The gate's answer for one request.
#[derive(Debug)]
pub enum Outcome<'g> {
    /// No enforcing policy applies: forward (shadow policies may still owe aftercare).
    Unlimited(Aftercare),
    /// Banned by an operator (admin API): refuse (403) before any bucket or backend.
    Banned(BanHit),
    /// Caught by the robots.txt trap (it read the file, then fetched what it keeps from every
    /// crawler): refuse (403) until the trap ban ends, before any bucket or backend.
    Trapped(Trapped),
    /// On the blocklist (CrowdSec's decisions): refused as banned (403) or as throttled
    /// (429), as the entry's remedy says, before any bucket or backend.
    Blocked(Block),
    /// On an access list: the allow-list forwards unlimited, the deny-list refuses (403).
    Listed(AccessList),
    /// A `deny` policy (named) matched: refuse (403), nothing taken from any bucket.
    Denied(&'g Arc<str>),
    /// An `allow` policy (named) matched: forward, skipping every limit.
    AllowedByRule(&'g Arc<str>),
    /// A bearer token was presented that does not verify: refuse (401).
    InvalidToken,
    /// A verified source was sent twice (two lines, an underscore spelling, two cookies or
    /// parameters of its name): refuse (400), for which one counts is anyone's guess.
    AmbiguousCredential(Arc<str>),
    /// A credential the backend accepted once and refuses now, under `refused = "reject"`:
    /// refuse (403) at the edge.
    KeyRefused(Arc<str>),
    /// A `cost_header` that is not a whole number from 1 to the capacity: refuse (400).
    BadCost(BadCost),
    /// Every enforcing bucket paid (a held request: after its wait): forward, describing the
    /// most restrictive standing; the aftercare settles and releases when the request ends.
    Allowed(Decided<'g>, Aftercare),
    /// A bucket could not pay: refuse, describing the policy that makes the caller wait
    /// longest.
    Throttled(Decided<'g>),
    /// The caller already has `max_in_flight` requests under way: refuse.
    Busy(Busy<'g>),
    /// The request costs more than a policy's bucket can ever hold: refuse, with no time to
    /// retry after (no store was asked, no token taken).
    Unpayable(Unpayable<'g>),
    /// The store could not decide and `on_error` says what happens.
    Undecided(Undecided),
    /// A page load without a good pass: answer with the challenge page (a `challenge`
    /// policy, a dry bucket of an `on_limit = "challenge"` policy, or a CrowdSec `captcha`).
    /// The aftercare is what the limits that paid still owe.
    Challenged(Challenged<'g>, Aftercare),
}

/// A challenge to answer a request with.
#[derive(Debug, Clone, Copy)]
pub struct Challenged<'g> {
    /// The policy that set it (`crowdsec` for a CrowdSec `captcha` decision).
    pub policy: &'g Arc<str>,
    /// Its policy's id, which the pass records (0 for CrowdSec).
    pub policy_id: u64,
    /// What it asks.
    pub challenge: &'g Challenge,
}

/// A refusal for want of a concurrency slot.
#[derive(Debug, Clone, Copy)]
pub struct Busy<'g> {
    /// The policy whose slots are all taken.
    pub policy: &'g Arc<str>,
    /// Its `max_in_flight`.
    pub limit: u32,
    /// The caller whose slots they are.
    pub identity: Identity,
    /// The source that named `identity` (`None`: the anonymous caller): what a ban or
    /// override of the caller names it under.
    pub source: Option<&'g SourceSpec>,
    /// The caller as every request of theirs is known, whichever policy refused
    /// ([`stable_caller`](super::standing::stable_caller)).
    pub caller: Identity,
}

/// A refusal of a request that can never pass: its cost is above the capacity of the caller's
/// bucket (an operator's override made it smaller than the policy's cost, say).
#[derive(Debug, Clone, Copy)]
pub struct Unpayable<'g> {
    /// The policy whose bucket is too small.
    pub policy: &'g Arc<str>,
    /// Which of its limits applied.
    pub level: LimitsOf,
    /// The bucket's quota: its capacity is below `cost`.
    pub quota: HeaderQuota,
    /// Tokens the request would take.
    pub cost: u64,
    /// The caller whose bucket it is.
    pub identity: Identity,
    /// The source that named `identity` (`None`: the anonymous caller): what a ban or
    /// override of the caller names it under.
    pub source: Option<&'g SourceSpec>,
    /// The caller as every request of theirs is known, whichever policy refused
    /// ([`stable_caller`](super::standing::stable_caller)).
    pub caller: Identity,
}

/// The policy and caller a decision is about.
#[derive(Debug, Clone, Copy)]
pub struct Decided<'g> {
    /// How the deciding policy's bucket stands.
    pub standing: Standing<'g>,
    /// The caller whose bucket it is.
    pub identity: Identity,
    /// The source that named `identity` (`None`: the anonymous caller): what a ban or
    /// override of the caller names it under.
    pub source: Option<&'g SourceSpec>,
    /// The caller as every request of theirs is known, whichever policy decides
    /// ([`stable_caller`](super::standing::stable_caller)).
    pub caller: Identity,
}

/// What the proxy keeps of a decision for the rest of the request (the access log, the
/// offenders view, the caller a hashed pool sticks to).
#[derive(Debug, Clone)]
pub struct Ticket {
    /// The deciding policy.
    pub policy: Arc<str>,
    /// The caller whose bucket decided.
    pub identity: Identity,
    /// The caller, the same on each of their requests whichever policy decides: what a hashed
    /// pool sticks to.
    pub caller: Identity,
}

impl Decided<'_> {
    /// The owned part a request carries past the gate.
    pub fn ticket(&self) -> Ticket {
        Ticket {
            policy: self.standing.policy.clone(),
            identity: self.identity,
            caller: self.caller,
        }
    }
}

/// The kind of an outcome (the proxy's record names the request's decision after it:
/// `telemetry::RequestDecision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutcomeKind {
    /// Every bucket paid.
    Allowed,
    /// A bucket could not pay.
    Throttled,
    /// No enforcing policy applied.
    Unlimited,
    /// On the allow-list.
    Allowlisted,
    /// On the deny-list.
    Denylisted,
    /// Banned by an operator.
    Banned,
    /// Caught by the robots.txt trap.
    Trapped,
    /// Refused by a `deny` policy.
    Denied,
    /// Let past the limits by an `allow` policy.
    AllowedByRule,
    /// A bearer token did not verify.
    InvalidToken,
    /// A verified source was sent twice.
    AmbiguousCredential,
    /// A revoked credential was refused at the edge (`refused = "reject"`).
    KeyRefused,
    /// A cost header was malformed or too large.
    BadCost,
    /// The store failed; the request was let through.
    StoreError,
    /// The store failed; the request was refused.
    StoreUnavailable,
    /// Answered with a challenge page.
    Challenged,
    /// Forwarded by the gate, then shed: the backend was overloaded (`[overload]`).
    Shed,
}

impl OutcomeKind {
    /// Whether a request of this kind goes on to the backend.
    pub fn forwards(self) -> bool {
        match self {
            OutcomeKind::Allowed
            | OutcomeKind::Unlimited
            | OutcomeKind::Allowlisted
            | OutcomeKind::AllowedByRule
            | OutcomeKind::StoreError => true,
            OutcomeKind::Throttled
            | OutcomeKind::Denylisted
            | OutcomeKind::Banned
            | OutcomeKind::Trapped
            | OutcomeKind::Denied
            | OutcomeKind::InvalidToken
            | OutcomeKind::AmbiguousCredential
            | OutcomeKind::KeyRefused
            | OutcomeKind::BadCost
            | OutcomeKind::StoreUnavailable
            | OutcomeKind::Challenged
            | OutcomeKind::Shed => false,
        }
    }
}

impl Outcome<'_> {
    /// Which kind of outcome this is.
    pub fn kind(&self) -> OutcomeKind {
        match self {
            Outcome::Unlimited(_) => OutcomeKind::Unlimited,
            Outcome::Listed(AccessList::Allow) => OutcomeKind::Allowlisted,
            Outcome::Listed(AccessList::Deny) => OutcomeKind::Denylisted,
            Outcome::Banned(_) => OutcomeKind::Banned,
            Outcome::Trapped(_) => OutcomeKind::Trapped,
            Outcome::Denied(_) => OutcomeKind::Denied,
            Outcome::AllowedByRule(_) => OutcomeKind::AllowedByRule,
            Outcome::Blocked(block) => match block.remedy {
                Remedy::Ban => OutcomeKind::Banned,
                Remedy::Throttle => OutcomeKind::Throttled,
                Remedy::Challenge => OutcomeKind::Banned,
            },
            Outcome::InvalidToken => OutcomeKind::InvalidToken,
            Outcome::AmbiguousCredential(_) => OutcomeKind::AmbiguousCredential,
            Outcome::KeyRefused(_) => OutcomeKind::KeyRefused,
            Outcome::BadCost(_) => OutcomeKind::BadCost,
            Outcome::Allowed(..) => OutcomeKind::Allowed,
            Outcome::Throttled(_) | Outcome::Busy(_) | Outcome::Unpayable(_) => {
                OutcomeKind::Throttled
            }
            Outcome::Undecided(Undecided::Pass) => OutcomeKind::StoreError,
            Outcome::Undecided(Undecided::Refuse) => OutcomeKind::StoreUnavailable,
            Outcome::Challenged(..) => OutcomeKind::Challenged,
        }
    }

    /// The decision, when a policy's bucket decided.
    pub fn decided(&self) -> Option<&Decided<'_>> {
        match self {
            Outcome::Allowed(d, _) | Outcome::Throttled(d) => Some(d),
            _ => None,
        }
    }

    /// What the proxy keeps of the deciding policy and caller, if one decided.
    pub fn ticket(&self) -> Option<Ticket> {
        match self {
            Outcome::Busy(b) => Some(Ticket {
                policy: b.policy.clone(),
                identity: b.identity,
                caller: b.caller,
            }),
            Outcome::Unpayable(u) => Some(Ticket {
                policy: u.policy.clone(),
                identity: u.identity,
                caller: u.caller,
            }),
            _ => self.decided().map(Decided::ticket),
        }
    }

    /// The work later phases owe the request (settlements, slots), taken out of the outcome.
    pub fn take_aftercare(&mut self) -> Aftercare {
        match self {
            Outcome::Allowed(_, aftercare)
            | Outcome::Unlimited(aftercare)
            | Outcome::Challenged(_, aftercare) => std::mem::take(aftercare),
            _ => Aftercare::default(),
        }
    }
}
