//! What an HTTP front door knows of a request before the gate decides it, in one shape for
//! the proxy (read from its own session) and the decision endpoint (read from the asking
//! proxy's headers): the signed message, the query, the client (resolved once by the front
//! door), the route facts. The gate's [`Request`] is built from it in one place, so the two
//! front doors cannot describe a request differently.

use super::Decider;
use crate::bots::Message;
use crate::identity::{Request, RequestFacts, Traits};
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
    /// What routes and policies match on (the normal path, the host when needed).
    pub route: RouteFacts<'a>,
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
        let jwt = decider.callers.jwt.as_deref();
        Request::new(self.message.headers, self.query, self.client_ip, jwt)
            .with_facts(facts)
            .with_traits(traits)
            .with_provenance(decider.callers.provenance.as_deref())
    }
}

impl Decider {
    /// What is known of the sender of `facts`.
    pub async fn sender(&self, facts: &HttpFacts<'_>) -> Traits {
        self.traits(facts.client_ip, &facts.message).await
    }
}
