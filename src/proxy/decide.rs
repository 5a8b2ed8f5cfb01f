//! The request's facts, read from the session and handed to the gate.

use super::Snapshot;
use crate::clock::wall_now_s;
use crate::gate::{Outcome, Trail};
use crate::identity::{Pass, Reach, Request, RequestFacts, Traits};
use crate::policy::{request_host, Class, RouteFacts};
use pingora::http::RequestHeader;
use pingora::proxy::Session;
use std::net::IpAddr;

/// The TCP peer's address.
pub(super) fn peer_ip(session: &Session) -> Option<IpAddr> {
    session.client_addr()?.as_inet().map(|a| a.ip())
}

/// What the gate decided about a request, and what was learnt of its sender on the way.
pub(super) struct Decision<'s> {
    /// The gate's outcome.
    pub(super) outcome: Outcome<'s>,
    /// What is known of the sender.
    pub(super) traits: Traits,
    /// The client address (behind trusted proxies).
    pub(super) client_ip: Option<IpAddr>,
    /// The good pass the request carried.
    pub(super) pass: Option<Pass>,
    /// Its class when the backend is overloaded.
    pub(super) class: Class,
    /// The policies whose buckets it met, in the order they were checked.
    pub(super) trail: Trail<'s>,
    /// Whether it loads a page (a challenge page can answer it).
    pub(super) page: bool,
}

/// What the gate of `snapshot` decides about the request in `session`, and what is known of
/// its sender.
pub(super) async fn decide<'s>(snapshot: &'s Snapshot, session: &Session) -> Decision<'s> {
    let req = session.req_header();
    let callers = &snapshot.decider.callers;
    let client_ip = callers.client_ip.resolve(peer_ip(session), &req.headers);
    let message = crate::bots::Message::new(&req.method, &req.uri, &req.headers);
    let mut traits = snapshot.decider.traits(client_ip, &message).await;
    traits.ja4 = super::ja4::request_ja4(&callers.client_ip, session, peer_ip(session));
    if session.is_http2() {
        traits.h2fp = super::h2fp::connection_h2fp(session.digest());
    }
    let (pass, reach) = match &snapshot.challenges {
        Some(room) => (
            room.pass_of(&req.headers, client_ip, wall_now_s()),
            room.reach(&req.method, req.uri.path(), &req.headers),
        ),
        None => (None, Reach::NotAPage),
    };
    let host = host(req, snapshot.decider.gate.needs_host());
    let route = route_facts(req, host.as_deref());
    let facts = RequestFacts {
        path: Some(route.path),
        method: Some(req.method.as_str()),
        host: route.host,
    };
    let request = Request::new(
        &req.headers,
        req.uri.query(),
        client_ip,
        callers.jwt.as_deref(),
    )
    .with_facts(facts)
    .with_traits(&traits)
    .with_pass(pass.as_ref(), reach);
    let (outcome, notes) = snapshot.decider.gate.decide_noted(&request, &route).await;
    drop(request);
    Decision {
        outcome,
        traits,
        client_ip,
        pass,
        class: notes.class,
        trail: notes.trail,
        page: reach != Reach::NotAPage,
    }
}

/// The request's host, when something `needed` it (working it out costs an allocation).
pub(super) fn host(req: &RequestHeader, needed: bool) -> Option<String> {
    match needed {
        true => request_host(&req.uri, req.headers.get(http::header::HOST)),
        false => None,
    }
}

/// What routes match on: the same facts for policies and for `[[route]]` tables.
pub(super) fn route_facts<'r>(req: &'r RequestHeader, host: Option<&'r str>) -> RouteFacts<'r> {
    RouteFacts {
        method: &req.method,
        host,
        // Already the normal path: `early_request_filter` rewrote the target (hygiene.rs), so
        // routes and policies match what the backend will serve.
        path: req.uri.path(),
    }
}
