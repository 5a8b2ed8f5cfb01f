//! What an HTTP front door knows of a request before the gate decides it, in one shape for
//! the proxy (read from its own session) and the decision endpoint (read from the asking
//! proxy's headers): the signed message, the query, the client (resolved once by the front
//! door), what it saw of the client's connection, the route facts. The gate's [`Request`] and
//! what is known of its sender ([`Decider::sender`]: the claim, the fingerprints, the bot
//! score) are made from it in one place each, so the two front doors cannot describe or score
//! a request differently.

use super::Decider;
use crate::bots::Message;
use crate::identity::{H2Fp, H2fpDeclined, Ja4, Request, RequestFacts, RobotsFact, Traits};
use crate::policy::RouteFacts;
use std::net::IpAddr;

/// A request as an HTTP front door read it.
pub struct HttpFacts<'a> {
    /// Its method, target, authority and headers, as a signature covers them.
    pub message: Message<'a>,
    /// Its query string, without `?`.
    pub query: Option<&'a str>,
    /// The client address (behind trusted proxies), resolved once by the front door.
    pub client_ip: Option<IpAddr>,
    /// What the front door saw of the connection the request came on.
    pub seen: Seen,
    /// What routes and policies match on (the normal path, the host when needed).
    pub route: RouteFacts<'a>,
}

/// What a front door saw of the connection a request came on: whether its peer is a trusted
/// proxy, and the fingerprints of the client's own connection, when Floodgate terminated it
/// (the decision endpoint never does: a trusted proxy there tells the JA4 in
/// `identity.ja4_header`).
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// Whether the peer is a trusted proxy (its `identity.ja4_header` is believed).
    pub trusted_peer: bool,
    /// The JA4 of the TLS connection, read by Floodgate's own listener.
    pub ja4: Option<Ja4>,
    /// The HTTP/2 fingerprint of the connection, or why none was made.
    pub h2fp: Option<Result<H2Fp, H2fpDeclined>>,
}

impl HttpFacts<'_> {
    /// The gate's request: these facts and what is known of the sender (`traits`), its bearer
    /// token verified by `decider`'s verifier.
    pub fn request<'r>(&'r self, decider: &'r Decider, traits: &'r Traits) -> Request<'r> {
        let facts = RequestFacts {
            path: Some(self.route.path),
            method: Some(self.route.method.as_str()),
            host: self.route.host,
        };
        let callers = decider.callers();
        Request::new(
            self.message.headers,
            self.query,
            self.client_ip,
            callers.jwt.as_deref(),
        )
        .with_facts(facts)
        .with_traits(traits)
        .with_provenance(callers.provenance.as_deref())
    }

    /// The request's JA4: what a trusted proxy says of it (`identity.ja4_header`, read with
    /// `decider`'s resolver), else that of the connection.
    fn ja4(&self, decider: &Decider) -> Option<Ja4> {
        let resolver = &decider.callers().client_ip;
        match resolver.forwarded_ja4_from(self.seen.trusted_peer, self.message.headers) {
            Some(forwarded) => forwarded,
            None => self.seen.ja4,
        }
    }
}

impl Decider {
    /// What is known of the sender of `facts`, the same at every front door and in one order:
    /// its claim and origin (the profiler); its fingerprints; what robots.txt says of it
    /// (`robots`, given the sender so far: the proxy's `[robots]`; nothing at the decision
    /// endpoint); last the bot score, which reads them all, when a policy reads it or the
    /// front door `asked` (a header to the backend).
    pub async fn sender(
        &self,
        facts: &HttpFacts<'_>,
        robots: impl FnOnce(&Traits) -> Option<RobotsFact>,
        asked: bool,
    ) -> Traits {
        let mut traits = self.traits(facts.client_ip, &facts.message).await;
        traits.ja4 = facts.ja4(self);
        match &facts.seen.h2fp {
            Some(Ok(h2fp)) => traits.h2fp = Some(h2fp.clone()),
            Some(Err(declined)) => traits.h2fp_declined = Some(*declined),
            None => {}
        }
        traits.robots = robots(&traits);
        self.score(&mut traits, facts.message.headers, asked);
        traits
    }
}
