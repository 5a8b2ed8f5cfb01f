//! The one record of a request's decision: built once, from the gate's outcome and what was
//! learnt of the sender (or from what Floodgate answered by itself), amended only through its
//! methods (overload's admission), and read by the access log, the decision record, the
//! trace, the offenders table and the metrics, each a function of it.

mod caller;
mod decision;
mod steps;

pub(super) use caller::Caller;
pub(super) use decision::Via;
pub(super) use steps::Steps;

use decision::decision_of;

use crate::explain::{Admittance, Overloaded};
use crate::gate::{Outcome, Trail};
use crate::identity::{Identity, ProofState, Traits};
use crate::policy::Priority;
use crate::telemetry::RequestDecision;
use std::sync::Arc;

/// What the gate's outcome, and what the proxy learnt on the way, say of a request.
#[derive(Debug, Default)]
pub(super) struct Record {
    decision: Option<RequestDecision>,
    caller: Option<Caller>,
    ruled_by: Option<Arc<str>>,
    blocked_by: Option<Arc<str>>,
    traits: Traits,
    pass: Option<Identity>,
    proof: Option<ProofState>,
    via: Option<Via>,
    steps: Steps,
    overload: Option<Overloaded>,
}

/// What the proxy learnt of the request on its way to the gate, besides the outcome.
pub(super) struct Learnt {
    /// What is known of the sender (bot claim, fingerprints, score, robots.txt's verdict).
    pub(super) traits: Traits,
    /// The digest of the good pass it carried, when the log or the records show it.
    pub(super) pass: Option<Identity>,
    /// What was known of the verified credentials it carried.
    pub(super) proof: Option<ProofState>,
    /// Whether a Privacy Pass token earned it a pass now.
    pub(super) earned: bool,
}

impl Record {
    /// The record of the gate's `outcome` (the policies checked on its `trail`) of a request
    /// of which `learnt` is known.
    pub(super) fn decided(outcome: &Outcome<'_>, trail: &Trail<'_>, learnt: Learnt) -> Self {
        let kind = outcome.kind();
        let via = learnt.earned.then_some(Via::PrivacyPass);
        // A Privacy Pass token solved the challenge the request would have met.
        let decision = match via {
            Some(Via::PrivacyPass) if kind.forwards() => RequestDecision::PassIssued,
            _ => decision_of(kind),
        };
        let (ruled_by, blocked_by) = match outcome {
            Outcome::Denied(policy) | Outcome::AllowedByRule(policy) => (Some(*policy), None),
            Outcome::Challenged(challenged, _) => (Some(challenged.policy), None),
            Outcome::Blocked(block) => (None, Some(&block.reason)),
            Outcome::Unlimited(_)
            | Outcome::Banned(_)
            | Outcome::Trapped(_)
            | Outcome::Listed(_)
            | Outcome::InvalidToken
            | Outcome::AmbiguousCredential(_)
            | Outcome::KeyRefused(_)
            | Outcome::BadCost(_)
            | Outcome::Allowed(..)
            | Outcome::Throttled(_)
            | Outcome::Busy(_)
            | Outcome::Unpayable(_)
            | Outcome::Undecided(_) => (None, None),
        };
        Self {
            decision: Some(decision),
            caller: Caller::of(outcome),
            ruled_by: ruled_by.cloned(),
            blocked_by: blocked_by.cloned(),
            traits: learnt.traits,
            pass: learnt.pass,
            proof: learnt.proof,
            via,
            steps: Steps::of(outcome, trail),
            overload: None,
        }
    }

    /// The record of a request Floodgate answered by itself, outside the gate (a challenge's
    /// solution, `/robots.txt`): `decision` says what it came to.
    pub(super) fn answered(decision: RequestDecision) -> Self {
        Self {
            decision: Some(decision),
            ..Self::default()
        }
    }

    /// Overload protection gave the request, of `priority`, a slot.
    pub(super) fn admitted(&mut self, priority: Priority) {
        self.admission(priority, Admittance::Admitted);
    }

    /// Overload protection showed the request, of `priority`, the challenge page of its
    /// `on_overload` policy `policy`.
    pub(super) fn challenged_by_overload(&mut self, priority: Priority, policy: Arc<str>) {
        self.admission(priority, Admittance::Challenged);
        self.decision = Some(RequestDecision::Challenged);
        self.ruled_by = Some(policy);
    }

    /// Overload protection shed the request, of `priority`: `challenge` when it would have
    /// shown a challenge page, had there been challenges to show.
    pub(super) fn shed(&mut self, priority: Priority, challenge: bool) {
        let admission = match challenge {
            true => Admittance::Challenged,
            false => Admittance::Shed,
        };
        self.admission(priority, admission);
        self.decision = Some(RequestDecision::Shed);
    }

    fn admission(&mut self, priority: Priority, admission: Admittance) {
        self.overload = Some(Overloaded {
            priority,
            admission,
        });
    }

    /// What became of the request (`None`: answered before any decision, a bad head).
    pub(super) fn decision(&self) -> Option<RequestDecision> {
        self.decision
    }

    /// The `decision` word of the log, the record and the span (empty before any decision).
    pub(super) fn decision_word(&self) -> &'static str {
        self.decision.map_or("", RequestDecision::label)
    }

    /// The caller whose bucket decided, when one did.
    pub(super) fn caller(&self) -> Option<&Caller> {
        self.caller.as_ref()
    }

    /// The deciding policy: the bucket's, or the `deny`, `allow` or `challenge` policy that
    /// ruled.
    pub(super) fn policy(&self) -> Option<&Arc<str>> {
        self.caller
            .as_ref()
            .map(|c| &c.policy)
            .or(self.ruled_by.as_ref())
    }

    /// The blocklist entry's reason (CrowdSec's scenario), when it refused.
    pub(super) fn blocked_by(&self) -> Option<&Arc<str>> {
        self.blocked_by.as_ref()
    }

    /// What is known of the sender.
    pub(super) fn traits(&self) -> &Traits {
        &self.traits
    }

    /// The digest of the good pass the request carried (shown when the log or records are on).
    pub(super) fn pass(&self) -> Option<Identity> {
        self.pass
    }

    /// What was known of the verified credentials the request carried.
    pub(super) fn proof(&self) -> Option<ProofState> {
        self.proof
    }

    /// How the request came by its pass, when it did now.
    pub(super) fn via(&self) -> Option<Via> {
        self.via
    }

    /// The caller and policy the offenders table counts the request against: a refusal for
    /// want of tokens or slots of a caller's bucket.
    pub(super) fn offender(&self) -> Option<&Caller> {
        let decision = self.decision?;
        let counted = match decision {
            RequestDecision::Throttled => true,
            RequestDecision::Allowed
            | RequestDecision::Unlimited
            | RequestDecision::Allowlisted
            | RequestDecision::Denylisted
            | RequestDecision::Banned
            | RequestDecision::Trapped
            | RequestDecision::Denied
            | RequestDecision::AllowedByRule
            | RequestDecision::InvalidToken
            | RequestDecision::AmbiguousCredential
            | RequestDecision::KeyRefused
            | RequestDecision::BadCost
            | RequestDecision::StoreError
            | RequestDecision::StoreUnavailable
            | RequestDecision::Challenged
            | RequestDecision::Shed
            | RequestDecision::PassIssued
            | RequestDecision::SolutionRefused
            | RequestDecision::NonceRefused
            | RequestDecision::SolutionMalformed
            | RequestDecision::ChallengeUnavailable
            | RequestDecision::RobotsTxt => false,
        };
        // A blocklist's throttle names no caller's bucket.
        self.caller.as_ref().filter(|_| counted)
    }

    /// Whether the request was a solution to a challenge, answered at the challenge's path
    /// (traced as an allowed request is).
    pub(super) fn is_solution(&self) -> bool {
        let Some(decision) = self.decision else {
            return false;
        };
        match decision {
            // A pass a Privacy Pass token earned comes with a request the gate let on.
            RequestDecision::PassIssued => self.via.is_none(),
            RequestDecision::SolutionRefused
            | RequestDecision::NonceRefused
            | RequestDecision::SolutionMalformed
            | RequestDecision::ChallengeUnavailable => true,
            RequestDecision::Allowed
            | RequestDecision::Throttled
            | RequestDecision::Unlimited
            | RequestDecision::Allowlisted
            | RequestDecision::Denylisted
            | RequestDecision::Banned
            | RequestDecision::Trapped
            | RequestDecision::Denied
            | RequestDecision::AllowedByRule
            | RequestDecision::InvalidToken
            | RequestDecision::AmbiguousCredential
            | RequestDecision::KeyRefused
            | RequestDecision::BadCost
            | RequestDecision::StoreError
            | RequestDecision::StoreUnavailable
            | RequestDecision::Challenged
            | RequestDecision::Shed
            | RequestDecision::RobotsTxt => false,
        }
    }

    /// What the decision record keeps of it, taken out (the log and the trace have read it).
    pub(super) fn take_for_keeping(&mut self) -> Kept {
        Kept {
            decision: self.decision,
            caller: self.caller.as_ref().map(Caller::explained),
            steps: std::mem::take(&mut self.steps),
            traits: std::mem::take(&mut self.traits),
            pass: self.pass,
            proof: self.proof,
            via: self.via,
            overload: self.overload,
            blocked_by: self.blocked_by.take(),
        }
    }
}

/// What the decision record takes of the request's record.
pub(super) struct Kept {
    pub(super) decision: Option<RequestDecision>,
    pub(super) caller: Option<crate::explain::Caller>,
    pub(super) steps: Steps,
    pub(super) traits: Traits,
    pub(super) pass: Option<Identity>,
    pub(super) proof: Option<ProofState>,
    pub(super) via: Option<Via>,
    pub(super) overload: Option<Overloaded>,
    pub(super) blocked_by: Option<Arc<str>>,
}

#[cfg(test)]
mod tests;
