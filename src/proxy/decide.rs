//! The request's facts, read from the session and handed to the gate.

use super::Snapshot;
use crate::gate::Outcome;
use crate::identity::Request;
use crate::policy::{request_host, RouteFacts};
use pingora::proxy::Session;
use std::net::IpAddr;

/// The TCP peer's address.
pub(super) fn peer_ip(session: &Session) -> Option<IpAddr> {
    session.client_addr()?.as_inet().map(|a| a.ip())
}

/// What the gate of `snapshot` decides about the request in `session`.
pub(super) async fn decide<'s>(snapshot: &'s Snapshot, session: &Session) -> Outcome<'s> {
    let req = session.req_header();
    let callers = &snapshot.callers;
    let client_ip = callers.client_ip.resolve(peer_ip(session), &req.headers);
    let request = Request::new(
        &req.headers,
        req.uri.query(),
        client_ip,
        callers.jwt.as_deref(),
    );
    let host = match snapshot.gate.needs_host() {
        true => request_host(&req.uri, req.headers.get(http::header::HOST)),
        false => None,
    };
    let route = RouteFacts {
        method: &req.method,
        host: host.as_deref(),
        // Already the normal path: `early_request_filter` rewrote the target (hygiene.rs), so
        // policies match what the backend will serve.
        path: req.uri.path(),
    };
    snapshot.gate.decide(&request, &route).await
}
