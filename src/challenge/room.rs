//! The challenge room of one config: opens the pass a request carries, tells whether a page
//! could reach its sender, and renders the challenge pages the gate asks for, each with a
//! fresh signed nonce. Built with each snapshot; the nonce ledger outlives reloads.

use super::encoding::Coding;
use super::page::{PageInput, Pages};
use super::reach::{PageRules, PatternError};
use super::settings::ChallengeSettings;
use super::target::return_target;
use super::token::Signer;
use crate::clock::Clock;
use crate::identity::{cookie_value, Challenge, IdentityKey, Pass, Reach};
use crate::limiter::NonceLedger;
use crate::telemetry::{ChallengeMetrics, ChallengeResult};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;

/// A challenge page to answer with.
#[derive(Debug, Clone)]
pub struct Page {
    /// Its status (`challenge.status`, 403 by default).
    pub status: u16,
    /// The HTML, encoded with `coding`.
    pub body: Bytes,
    /// How `body` is encoded.
    pub coding: Coding,
    /// The `Content-Security-Policy` it must be served with.
    pub csp: HeaderValue,
}

/// Why no page could be made.
#[derive(Debug, Clone, thiserror::Error)]
#[error(transparent)]
pub struct PageError(#[from] super::token::NoRandomness);

/// Everything challenges share under one config.
pub struct Challenges {
    pub(super) settings: ChallengeSettings,
    pub(super) signer: Signer,
    pages: Pages,
    /// The pages' `Content-Security-Policy`, made once.
    csp: HeaderValue,
    rules: PageRules,
    pub(super) nonces: Arc<dyn NonceLedger>,
    pub(super) metrics: ChallengeMetrics,
    /// The names of the policies that challenge, by id (0: CrowdSec), for the metric's label.
    names: HashMap<u64, Arc<str>>,
    /// The trusted Privacy Pass issuers (`[challenge.privacy_pass]`), if any.
    pub(super) tokens: Option<super::tokens::Tokens>,
    /// What pages are dated and passes and solutions expire by.
    clock: Clock,
}

/// The request a challenge page answers.
#[derive(Debug, Clone, Copy)]
pub struct Visitor<'a> {
    /// Where it was going (its path and query).
    pub target: &'a str,
    /// Its client's address.
    pub client: Option<IpAddr>,
    /// Its request id, shown on the page as the reference to quote.
    pub reference: &'a str,
}

impl Challenges {
    /// The room of `settings`, signing with a key derived from `key`, remembering used nonces
    /// in `nonces`; `names` are the challenging policies' names by id.
    pub fn new(
        settings: ChallengeSettings,
        key: &IdentityKey,
        nonces: Arc<dyn NonceLedger>,
        names: HashMap<u64, Arc<str>>,
        metrics: ChallengeMetrics,
    ) -> Result<Self, PatternError> {
        let pages = Pages::new();
        let csp = HeaderValue::from_str(pages.content_security_policy())
            .expect("the policy is ASCII: keywords and base64 hashes");
        Ok(Self {
            rules: PageRules::new(&settings.never_paths)?,
            pages,
            csp,
            signer: Signer::new(key),
            settings,
            nonces,
            metrics,
            names,
            tokens: None,
            clock: Clock::System,
        })
    }

    /// The same room, dating pages and expiring passes and solutions by `clock`.
    pub fn with_clock(self, clock: Clock) -> Self {
        Self { clock, ..self }
    }

    /// What pages are dated and passes and solutions expire by.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Its settings.
    pub fn settings(&self) -> &ChallengeSettings {
        &self.settings
    }

    /// Whether `path` is where solutions come back.
    pub fn receives(&self, path: &str) -> bool {
        path == self.settings.path
    }

    /// The good pass in `headers`' cookie, for a request from `client` at `now_s` (Unix
    /// seconds): signed by the fleet, not expired, and from its network when bound.
    pub fn pass_of(&self, headers: &HeaderMap, client: Option<IpAddr>, now_s: u64) -> Option<Pass> {
        let value = cookie_value(headers, &self.settings.cookie)?;
        self.signer.open_pass(value, client, now_s).ok()
    }

    /// Whether a challenge page could reach the sender of a `method` request for `path`.
    pub fn reach(&self, method: &Method, path: &str, headers: &HeaderMap) -> Reach {
        self.rules.reach(method, path, headers)
    }

    /// The page of `challenge`, asked by policy `policy_id`, for `visitor`'s request at
    /// `now_ms`, encoded with `coding`: a fresh nonce in cached bytes.
    pub fn page(
        &self,
        challenge: &Challenge,
        policy_id: u64,
        visitor: &Visitor<'_>,
        now_ms: u64,
        coding: Coding,
    ) -> Result<Page, PageError> {
        let nonce = self
            .signer
            .nonce(challenge, policy_id, visitor.client, now_ms)?;
        let input = PageInput {
            action: &self.settings.path,
            nonce: &nonce,
            target: return_target(visitor.target).unwrap_or("/"),
            reference: visitor.reference,
            // Whole seconds, rounded up: the page never reloads before the server accepts it.
            wait_s: (self.settings.refresh_wait.as_millis().div_ceil(1000)).max(1) as u32,
        };
        let body = self.pages.render(challenge.kind, &input, coding);
        self.count(policy_id, challenge.kind.word(), ChallengeResult::Issued);
        Ok(Page {
            status: self.settings.status,
            body,
            coding,
            csp: self.csp.clone(),
        })
    }

    /// Counts a challenge of policy `policy_id`.
    pub(super) fn count(&self, policy_id: u64, kind: &str, result: ChallengeResult) {
        let name = self.names.get(&policy_id).map_or("unknown", |n| &**n);
        self.metrics.count(name, kind, result);
    }
}
