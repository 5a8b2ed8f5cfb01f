//! The request's path up to the backend: lists, identity, policies, limiter.

use crate::access::{Access, AccessRules};
use crate::active::Active;
use crate::gate::Verdict;
use crate::identity::{ClientIpResolver, JwtVerifier, Request};
use crate::metrics::Metrics;
use crate::policy::{request_host, RouteFacts};
use crate::respond;
use pingora::proxy::Session;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

/// How a request's caller is found and checked against the lists.
pub struct Callers {
    /// Finds the client address behind trusted proxies.
    pub client_ip: ClientIpResolver,
    /// Verifies bearer tokens.
    pub jwt: Option<Arc<JwtVerifier>>,
    /// Allow- and deny-lists.
    pub access: AccessRules,
}

/// The TCP peer's address.
pub(super) fn peer_ip(session: &Session) -> Option<IpAddr> {
    session.client_addr()?.as_inet().map(|a| a.ip())
}

/// What to do with the request in `session`, under the `active` config.
pub(super) async fn decide(active: &Active, metrics: &Metrics, session: &Session) -> Verdict {
    let req = session.req_header();
    let callers = &active.callers;
    let client_ip = callers.client_ip.resolve(peer_ip(session), &req.headers);
    let request = Request::new(
        &req.headers,
        req.uri.query(),
        client_ip,
        callers.jwt.as_deref(),
    );
    match callers.access.check(&request) {
        Access::Denied => {
            metrics.access.with_label_values(&["deny"]).inc();
            return Verdict::refuse(
                respond::refusal(403, "This client is not allowed."),
                "denylisted",
            );
        }
        Access::Allowed => {
            metrics.access.with_label_values(&["allow"]).inc();
            return Verdict::pass("allowlisted");
        }
        Access::Limited => {}
    }
    let host = match active.gate.needs_host() {
        true => request_host(&req.uri, req.headers.get(http::header::HOST)),
        false => None,
    };
    let route = RouteFacts {
        method: &req.method,
        host: host.as_deref(),
        path: req.uri.path(),
    };
    let planned = match active.gate.plan(&request, &route) {
        Ok(planned) => planned,
        Err(e) => {
            metrics.invalid_tokens.inc();
            log::debug!("refusing a request: {e}");
            return Verdict::refuse(
                respond::refusal(401, "The bearer token is not valid."),
                "invalid_token",
            );
        }
    };
    let started = Instant::now();
    let verdict = active.gate.check(&planned).await;
    metrics
        .limiter_seconds
        .observe(started.elapsed().as_secs_f64());
    verdict
}
