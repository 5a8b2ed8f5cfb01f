//! The request's facts, read from the session and handed to the gate.

use super::Snapshot;
use crate::gate::{timing_store, Decision, HttpFacts, StoreTimes};
use crate::identity::{Client, Pass, ProofState, Reach, Traits};
use crate::policy::{request_host, RouteFacts};
use crate::proof::Lesson;
use crate::robots::spring::Spared;
use pingora::http::RequestHeader;
use pingora::proxy::Session;
use std::net::IpAddr;

/// The TCP peer's address.
pub(super) fn peer_ip(session: &Session) -> Option<IpAddr> {
    session.client_addr()?.as_inet().map(|a| a.ip())
}

/// What the gate decided about a request, and what was learnt of its sender on the way.
pub(super) struct DecidedRequest<'s> {
    /// The gate's decision: the outcome, the request's class, the policies checked.
    pub(super) decision: Decision<'s>,
    /// What is known of the sender.
    pub(super) traits: Traits,
    /// The good pass the request carried.
    pub(super) pass: Option<Pass>,
    /// Whether it loads a page (a challenge page can answer it).
    pub(super) page: bool,
    /// When the gate's store call began and ended, when the request is traced.
    pub(super) store: Option<StoreTimes>,
    /// What was known of the verified credentials it carried (none without any).
    pub(super) proof: Option<ProofState>,
    /// What the backend's answer may teach of its credential.
    pub(super) lesson: Option<Lesson>,
    /// Why a request for the robots.txt trap caught no one (it gets 404 if the gate lets it
    /// through).
    pub(super) spared: Option<Spared>,
    /// The pass cookie its Privacy Pass token earned now (`Set-Cookie` on the answer).
    pub(super) earned: Option<String>,
}

/// What the gate of `snapshot` decides about the request in `session` from `client` (resolved
/// once, by the front; `secure`: it came over HTTPS), and what is known of its sender.
pub(super) async fn decide<'s>(
    snapshot: &'s Snapshot,
    session: &Session,
    client: &Client,
    secure: bool,
) -> DecidedRequest<'s> {
    let req = session.req_header();
    let decider = &snapshot.decider;
    let robots_host = snapshot.robots.as_ref().is_some_and(|r| r.needs_host());
    let gate = decider.gate();
    let host = host(req, gate.needs_host() || robots_host);
    let facts = HttpFacts {
        message: crate::bots::Message::new(&req.method, &req.uri, &req.headers),
        query: req.uri.query(),
        client_ip: client.ip,
        seen: super::seen::seen(session, client),
        route: route_facts(req, host.as_deref()),
    };
    let robots = |traits: &Traits| super::robots::judge(snapshot, req, host.as_deref(), traits);
    let asked = snapshot.upstream.score_headers().asked();
    let traits = decider.sender(&facts, robots, asked).await;
    let (pass, reach, earned) =
        super::challenge::passed(snapshot.challenges.as_deref(), req, client.ip, secure).await;
    let request = facts
        .request(decider, &traits)
        .with_pass(pass.as_ref(), reach);
    let (trapped, spared) = super::robots::trap(snapshot, req, &request).await;
    let request = request.with_trapped(trapped);
    // Traced: the store call's times come back beside the decision. That path is boxed, and
    // the gate's future made where it is awaited: held in a local, it would be laid out twice,
    // and this future (copied whole into the box of every request's `request_filter`) with it.
    let (decision, store) = match snapshot.tracer.is_some() {
        true => Box::pin(timing_store(gate.decide(&request, &facts.route))).await,
        false => (gate.decide(&request, &facts.route).await, None),
    };
    let proof = request.credentials().summary();
    let lesson = snapshot
        .proofs
        .as_ref()
        .and_then(|proofs| proofs.lesson(&request, &facts.route));
    drop(request);
    DecidedRequest {
        decision,
        traits,
        pass,
        page: reach != Reach::NotAPage,
        store,
        proof,
        lesson,
        spared,
        earned,
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
