//! The caller whose bucket decided a request, as its record keeps them.

use crate::gate::Outcome;
use crate::identity::{Identity, SourceSpec};
use std::sync::Arc;

/// The deciding policy and the caller whose bucket it is.
#[derive(Debug, Clone)]
pub(in crate::proxy) struct Caller {
    /// The deciding policy.
    pub(in crate::proxy) policy: Arc<str>,
    /// The caller's digest under that policy's source.
    pub(in crate::proxy) identity: Identity,
    /// The caller as every request of theirs is known, whichever policy decides: what a
    /// hashed pool sticks to.
    pub(in crate::proxy) stable: Identity,
    /// The source that named them (`None`: the anonymous caller).
    pub(in crate::proxy) source: Option<Arc<str>>,
}

impl Caller {
    /// The caller of `outcome`, when a policy's bucket (or its slots) decided.
    pub(super) fn of(outcome: &Outcome<'_>) -> Option<Self> {
        let (policy, identity, stable, source) = match outcome {
            Outcome::Allowed(d, _) | Outcome::Throttled(d) => {
                (d.standing.policy, d.identity, d.caller, d.source)
            }
            Outcome::Busy(b) => (b.policy, b.identity, b.caller, b.source),
            Outcome::Unpayable(u) => (u.policy, u.identity, u.caller, u.source),
            Outcome::Unlimited(_)
            | Outcome::Banned(_)
            | Outcome::Trapped(_)
            | Outcome::Blocked(_)
            | Outcome::Listed(_)
            | Outcome::Denied(_)
            | Outcome::AllowedByRule(_)
            | Outcome::InvalidToken
            | Outcome::AmbiguousCredential(_)
            | Outcome::KeyRefused(_)
            | Outcome::BadCost(_)
            | Outcome::Undecided(_)
            | Outcome::Challenged(..) => return None,
        };
        Some(Self {
            policy: policy.clone(),
            identity,
            stable,
            source: source.map(SourceSpec::shared_tag),
        })
    }

    /// The caller as the decision record names them: source and digest.
    pub(super) fn explained(&self) -> crate::explain::Caller {
        crate::explain::Caller {
            source: self.source.clone(),
            digest: self.identity,
        }
    }
}
