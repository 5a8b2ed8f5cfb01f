//! What one request runs under, start to finish: a config reload swaps in a new snapshot, and
//! requests already under way keep theirs. Its decider is the gate's, shared with the other
//! front doors ([`InForce`]).

use super::access_log::AccessLog;
use super::front::FrontSettings;
use super::header_guard::HeaderGuard;
use super::upstream::Upstream;
use crate::challenge::Challenges;
use crate::explain::Decisions;
use crate::gate::{Decider, InForce};
use crate::identity::BotClaim;
use crate::overload::Pools;
use crate::proof::Proofs;
use crate::robots::SiteRobots;
use crate::trace::Tracer;
use arc_swap::ArcSwap;
use std::sync::Arc;

/// The parts a reload swaps, all at once.
pub struct Snapshot {
    /// How callers are read, what is known of senders, the gate, and its replies.
    pub decider: Arc<Decider>,
    /// The backends.
    pub upstream: Upstream,
    /// Where one line per request is written, when the access log is on.
    pub access_log: Option<Arc<AccessLog>>,
    /// The request id header, `Via` and header-name case (set through
    /// [`Snapshot::with_front`]).
    pub(super) front: FrontSettings,
    /// Opens passes and renders challenge pages, when anything challenges (set through
    /// [`Snapshot::with_challenges`]).
    pub challenges: Option<Arc<Challenges>>,
    /// Each pool's watch, when `[overload]` is configured (set through
    /// [`Snapshot::with_overload`]).
    pub overload: Option<Pools>,
    /// Where each request's decision is kept to be explained, unless `decisions.keep = 0`
    /// (set through [`Snapshot::with_decisions`]).
    pub decisions: Option<Arc<Decisions>>,
    /// Whether new HTTP/2 connections are read for their fingerprint (something asks for it:
    /// `Config::wants_h2fp`; set through [`Snapshot::with_h2fp`]).
    pub h2fp: bool,
    /// Traces requests, when `[telemetry] otlp_endpoint` is set (set through
    /// [`Snapshot::with_tracer`]; kept across reloads that leave it as it was).
    pub tracer: Option<Arc<Tracer>>,
    /// The verified sources and what is proven of them, when `[identity.verify]` names any
    /// (set through [`Snapshot::with_proofs`]; the same proofs the decider's chain reads).
    pub proofs: Option<Arc<Proofs>>,
    /// robots.txt served, judged and trapped by, when `[robots]` is configured (set through
    /// [`Snapshot::with_robots`]).
    pub robots: Option<Arc<SiteRobots>>,
    /// The headers held to one line and whose underscore spellings never reach the backend
    /// (set through [`Snapshot::with_header_guard`]).
    pub(super) guard: HeaderGuard,
}

impl Snapshot {
    /// A snapshot deciding with `decider`, forwarding to `upstream`.
    pub fn new(decider: Decider, upstream: Upstream, access_log: Option<Arc<AccessLog>>) -> Self {
        Self {
            decider: Arc::new(decider),
            upstream,
            access_log,
            front: FrontSettings::default(),
            challenges: None,
            overload: None,
            decisions: None,
            h2fp: false,
            tracer: None,
            proofs: None,
            robots: None,
            guard: HeaderGuard::new(&[], &[]),
        }
    }

    /// What the proxy does for `outcome`: forward with these RateLimit headers, or answer.
    /// A deny names the category of `bot`, the crawler the request claimed.
    pub fn render(
        &self,
        outcome: &crate::gate::Outcome<'_>,
        bot: Option<&BotClaim>,
    ) -> super::Handling {
        self.decider.reply(outcome, bot).into()
    }

    /// The snapshot answering challenges with `challenges`.
    pub fn with_challenges(self, challenges: Option<Arc<Challenges>>) -> Self {
        Self { challenges, ..self }
    }

    /// The snapshot watching its pools with `overload`.
    pub fn with_overload(self, overload: Option<Pools>) -> Self {
        Self { overload, ..self }
    }

    /// The snapshot keeping its requests' decisions in `decisions`.
    pub fn with_decisions(self, decisions: Option<Arc<Decisions>>) -> Self {
        Self { decisions, ..self }
    }

    /// The snapshot reading new HTTP/2 connections for their fingerprint when `h2fp`.
    pub fn with_h2fp(self, h2fp: bool) -> Self {
        Self { h2fp, ..self }
    }

    /// The snapshot tracing requests with `tracer`.
    pub fn with_tracer(self, tracer: Option<Arc<Tracer>>) -> Self {
        Self { tracer, ..self }
    }

    /// The snapshot learning and reading proven credentials with `proofs`.
    pub fn with_proofs(self, proofs: Option<Arc<Proofs>>) -> Self {
        Self { proofs, ..self }
    }

    /// The snapshot serving and enforcing robots.txt with `robots`.
    pub fn with_robots(self, robots: Option<Arc<SiteRobots>>) -> Self {
        Self { robots, ..self }
    }

    /// The snapshot holding requests' headers to `guard`.
    pub fn with_header_guard(self, guard: HeaderGuard) -> Self {
        Self { guard, ..self }
    }

    /// The snapshot with `front` settings instead of the defaults.
    pub fn with_front(self, front: FrontSettings) -> Self {
        Self { front, ..self }
    }
}

impl InForce for ArcSwap<Snapshot> {
    fn decider(&self) -> Arc<Decider> {
        self.load().decider.clone()
    }
}
