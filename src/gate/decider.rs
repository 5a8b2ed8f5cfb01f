//! What every HTTP front door decides with (the proxy, the decision endpoint, the control API
//! that inspects callers): how a request's callers are read, what is known of its sender, the
//! gate, and the reply its outcome makes. A reload swaps in a new one; the front doors find
//! the one in force through [`InForce`], so none of them needs another's types.

use super::reply::{reply, PolicyHeaders, Reply};
use super::{Gate, Outcome};
use crate::bots::{Message, Profiler};
use crate::identity::{BotClaim, ClientIpResolver, JwtVerifier, Provenance, Traits};
use http::HeaderMap;
use std::net::IpAddr;
use std::sync::Arc;

/// How a request's caller facts are read: the client address and the bearer token.
pub struct Callers {
    /// Finds the client address behind trusted proxies.
    pub client_ip: ClientIpResolver,
    /// Verifies bearer tokens.
    pub jwt: Option<Arc<JwtVerifier>>,
    /// Knows which credentials are proven, when `[identity.verify]` names sources.
    pub provenance: Option<Arc<dyn Provenance>>,
}

/// The decision core of one snapshot: facts in (a request, its route), a typed
/// [`Outcome`] out ([`Gate::decide`]), and the [`Reply`] it makes.
pub struct Decider {
    /// How callers are read.
    callers: Callers,
    /// Lists, policies and the limiter call.
    gate: Gate,
    /// The `RateLimit-Policy` value of every policy level, rendered once.
    policy_headers: PolicyHeaders,
    /// Status of a throttled response.
    throttle_status: u16,
    /// Works out what is known of a request's sender (set through
    /// [`Decider::with_profiler`]); nothing is known without one.
    profiler: Option<Arc<Profiler>>,
}

impl Decider {
    /// A decider of these parts; what is said about each policy is rendered now.
    pub fn new(callers: Callers, gate: Gate, throttle_status: u16) -> Self {
        Self {
            policy_headers: PolicyHeaders::new(&gate),
            callers,
            gate,
            throttle_status,
            profiler: None,
        }
    }

    /// The decider learning what it can of each request's sender with `profiler`.
    pub fn with_profiler(self, profiler: Arc<Profiler>) -> Self {
        Self {
            profiler: Some(profiler),
            ..self
        }
    }

    /// How callers are read: the client address, the bearer token, proven credentials.
    pub fn callers(&self) -> &Callers {
        &self.callers
    }

    /// The gate: lists, policies and the limiter call ([`Gate::decide`]).
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// What works out what is known of a request's sender, if anything does (a reload keeps
    /// it when its inputs did not change).
    pub fn profiler(&self) -> Option<&Profiler> {
        self.profiler.as_deref()
    }

    /// What is known of the sender of `request`, from `client` (before its fingerprints: the
    /// front doors ask [`Decider::sender`]).
    pub(super) async fn traits(&self, client: Option<IpAddr>, request: &Message<'_>) -> Traits {
        match &self.profiler {
            Some(profiler) => profiler.profile(client, request).await,
            None => Traits::default(),
        }
    }

    /// Works out `traits.score` (the request's `headers`, its JA4 and HTTP/2 fingerprint
    /// already in `traits`) when a policy reads it or the front door `asked` (a header to the
    /// backend); nothing otherwise.
    pub(super) fn score(&self, traits: &mut Traits, headers: &HeaderMap, asked: bool) {
        if !(asked || self.gate.needs_score()) {
            return;
        }
        if let Some(profiler) = &self.profiler {
            traits.score = Some(profiler.score(traits, headers));
        }
    }

    /// What a front door does for `outcome`: forward with these RateLimit headers, or refuse.
    /// A deny names the category of `bot`, the crawler the request claimed.
    pub fn reply(&self, outcome: &Outcome<'_>, bot: Option<&BotClaim>) -> Reply {
        reply(
            outcome,
            &self.policy_headers,
            self.throttle_status,
            bot,
            self.gate.clock(),
        )
    }
}

/// Where a front door finds the decider in force (a reload swaps it).
pub trait InForce: Send + Sync {
    /// The decider in force now, kept for the whole of one decision.
    fn decider(&self) -> Arc<Decider>;
}
