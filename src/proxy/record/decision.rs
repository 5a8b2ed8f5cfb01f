//! The request's decision as the gate's outcome names it, and how a request came by its pass.

use crate::gate::OutcomeKind;
use crate::telemetry::RequestDecision;

/// How the request came by the pass it was let on with, when not by the cookie it carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::proxy) enum Via {
    /// A Privacy Pass token earned it now (`via=privacy_pass`).
    PrivacyPass,
}

impl Via {
    /// The word the log and the record show.
    pub(in crate::proxy) fn word(self) -> &'static str {
        match self {
            Via::PrivacyPass => "privacy_pass",
        }
    }
}

/// The request's decision, as the gate's outcome `kind` names it.
pub(super) fn decision_of(kind: OutcomeKind) -> RequestDecision {
    match kind {
        OutcomeKind::Allowed => RequestDecision::Allowed,
        OutcomeKind::Throttled => RequestDecision::Throttled,
        OutcomeKind::Unlimited => RequestDecision::Unlimited,
        OutcomeKind::Allowlisted => RequestDecision::Allowlisted,
        OutcomeKind::Denylisted => RequestDecision::Denylisted,
        OutcomeKind::Banned => RequestDecision::Banned,
        OutcomeKind::Trapped => RequestDecision::Trapped,
        OutcomeKind::Denied => RequestDecision::Denied,
        OutcomeKind::AllowedByRule => RequestDecision::AllowedByRule,
        OutcomeKind::InvalidToken => RequestDecision::InvalidToken,
        OutcomeKind::AmbiguousCredential => RequestDecision::AmbiguousCredential,
        OutcomeKind::KeyRefused => RequestDecision::KeyRefused,
        OutcomeKind::BadCost => RequestDecision::BadCost,
        OutcomeKind::StoreError => RequestDecision::StoreError,
        OutcomeKind::StoreUnavailable => RequestDecision::StoreUnavailable,
        OutcomeKind::Challenged => RequestDecision::Challenged,
        OutcomeKind::Shed => RequestDecision::Shed,
    }
}
