//! What one request runs under, start to finish: a config reload swaps in a new snapshot, and
//! requests already under way keep theirs.

use super::access_log::AccessLog;
use super::front::FrontSettings;
use super::render::PolicyHeaders;
use super::upstream::Upstream;
use crate::bots::{Message, Profiler};
use crate::challenge::Challenges;
use crate::gate::Gate;
use crate::identity::{BotClaim, ClientIpResolver, JwtVerifier, Traits};
use std::net::IpAddr;
use std::sync::Arc;

/// How a request's caller facts are read: the client address and the bearer token.
pub struct Callers {
    /// Finds the client address behind trusted proxies.
    pub client_ip: ClientIpResolver,
    /// Verifies bearer tokens.
    pub jwt: Option<Arc<JwtVerifier>>,
}

/// The parts a reload swaps, all at once.
pub struct Snapshot {
    /// How callers are read.
    pub callers: Callers,
    /// Lists, policies and the limiter call.
    pub gate: Gate,
    /// The `RateLimit-Policy` value of every policy level, rendered once.
    pub(super) policy_headers: PolicyHeaders,
    /// The backends.
    pub upstream: Upstream,
    /// Status of a throttled response.
    pub throttle_status: u16,
    /// Where one line per request is written, when the access log is on.
    pub access_log: Option<Arc<AccessLog>>,
    /// The request id header, `Via` and header-name case (set through
    /// [`Snapshot::with_front`]).
    pub(super) front: FrontSettings,
    /// Works out what is known of a request's sender (set through
    /// [`Snapshot::with_profiler`]); nothing is known without one.
    pub profiler: Option<Arc<Profiler>>,
    /// Opens passes and renders challenge pages, when anything challenges (set through
    /// [`Snapshot::with_challenges`]).
    pub challenges: Option<Arc<Challenges>>,
}

impl Snapshot {
    /// A snapshot of these parts; what the proxy says about each policy is rendered now.
    pub fn new(
        callers: Callers,
        gate: Gate,
        upstream: Upstream,
        throttle_status: u16,
        access_log: Option<Arc<AccessLog>>,
    ) -> Self {
        Self {
            policy_headers: PolicyHeaders::new(&gate),
            callers,
            gate,
            upstream,
            throttle_status,
            access_log,
            front: FrontSettings::default(),
            profiler: None,
            challenges: None,
        }
    }

    /// The snapshot learning what it can of each request's sender with `profiler`.
    pub fn with_profiler(self, profiler: Arc<Profiler>) -> Self {
        Self {
            profiler: Some(profiler),
            ..self
        }
    }

    /// What is known of the sender of `request`, from `client`.
    pub async fn traits(&self, client: Option<IpAddr>, request: &Message<'_>) -> Traits {
        match &self.profiler {
            Some(profiler) => profiler.profile(client, request).await,
            None => Traits::default(),
        }
    }

    /// What the proxy does for `outcome`: forward with these RateLimit headers, or answer.
    /// A deny names the category of `bot`, the crawler the request claimed.
    pub fn render(
        &self,
        outcome: &crate::gate::Outcome<'_>,
        bot: Option<&BotClaim>,
    ) -> super::Action {
        super::render::render(outcome, &self.policy_headers, self.throttle_status, bot)
    }

    /// The snapshot answering challenges with `challenges`.
    pub fn with_challenges(self, challenges: Option<Arc<Challenges>>) -> Self {
        Self { challenges, ..self }
    }

    /// The snapshot with `front` settings instead of the defaults.
    pub fn with_front(self, front: FrontSettings) -> Self {
        Self { front, ..self }
    }
}
