//! What the config asks of every connection, worked out once per load: whether HTTP/2
//! connections are read for their fingerprint (when nothing asks, none is, at no cost), and
//! whether requests are scored (the score's `ua-h2-mismatch` reads the fingerprint).

use super::Config;
use crate::identity::IdentityChain;
use crate::policy::Policy;

impl Config {
    /// Whether anything asks for the HTTP/2 fingerprint: the identity source `h2fp` (global or
    /// a policy's), `match.h2fp` or `unless.h2fp`, or `upstream.h2fp_header`. Anything else
    /// that reads `Traits.h2fp` (a bot-score signal) must be added here, or it finds none: the
    /// listener reads no connection when this is false.
    pub fn wants_h2fp(&self) -> bool {
        self.upstream.h2fp_header.is_some()
            || reads_h2fp(&self.identity)
            || self.policies.iter().any(policy_wants_h2fp)
            || self.wants_score()
    }

    /// Whether anything asks for the bot score: `match.min_score` or `max_score` (or in
    /// `unless`), or `upstream.score_header` or `signals_header`.
    pub fn wants_score(&self) -> bool {
        self.upstream.score_headers.asked()
            || self.policies.iter().any(|policy| {
                policy.conditions.sender.reads_score()
                    || policy
                        .unless
                        .as_ref()
                        .is_some_and(|unless| unless.conditions.sender.reads_score())
            })
    }
}

/// Whether `policy` reads the HTTP/2 fingerprint: its sources or its conditions.
fn policy_wants_h2fp(policy: &Policy) -> bool {
    policy
        .limit()
        .and_then(|l| l.sources.as_ref())
        .is_some_and(reads_h2fp)
        || !policy.conditions.sender.h2fp.is_empty()
        || policy
            .unless
            .as_ref()
            .is_some_and(|unless| !unless.conditions.sender.h2fp.is_empty())
}

/// Whether any source of `chain` is `h2fp`.
fn reads_h2fp(chain: &IdentityChain) -> bool {
    chain.sources.iter().any(|spec| spec.uses_h2fp())
}
