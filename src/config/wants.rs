//! What the config asks of every connection, worked out once per load: whether HTTP/2
//! connections are read for their fingerprint (when nothing asks, none is, at no cost),
//! whether requests are scored (the score's `ua-h2-mismatch` reads the fingerprint), and which
//! headers requests may not repeat or spell with underscores (`HeaderGuard`).

use super::Config;
use crate::identity::{ForwardingHeader, IdentityChain, Source};
use crate::policy::Policy;
use crate::proxy::HeaderGuard;
use http::HeaderName;

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

impl Config {
    /// The headers held to one line (those the identity sources read, global and each
    /// policy's) and whose underscore spellings are removed toward the backend (those, and
    /// what Floodgate tells the backend or believes from trusted proxies).
    pub fn header_guard(&self) -> HeaderGuard {
        let chains = std::iter::once(&self.identity).chain(
            self.policies
                .iter()
                .filter_map(|policy| policy.limit()?.sources.as_ref()),
        );
        let read: Vec<HeaderName> = chains
            .flat_map(|chain| &chain.sources)
            .flat_map(|spec| spec.parts())
            .filter_map(|part| match part {
                Source::Header(name) => Some(name.clone()),
                _ => None,
            })
            .collect();
        let upstream = &self.upstream;
        let forwarding = match self.client_ip.header() {
            ForwardingHeader::List(name) => Some(name),
            ForwardingHeader::Forwarded => None,
        };
        let told: Vec<HeaderName> = [
            Some(&self.server.front.request_id_header),
            upstream.ja4_header.as_ref(),
            upstream.h2fp_header.as_ref(),
            upstream.score_headers.score.as_ref(),
            upstream.score_headers.signals.as_ref(),
            forwarding,
            self.client_ip.ja4_header(),
        ]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
        HeaderGuard::new(&read, &told)
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
