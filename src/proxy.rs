//! `impl ProxyHttp`: identify the caller, pass the gate, forward round robin, report.

use crate::access::{Access, AccessRules};
use crate::config::UpstreamSettings;
use crate::gate::{Gate, RateLimitHeaders, Verdict};
use crate::identity::{ClientIpResolver, JwtVerifier, Request};
use crate::metrics::Metrics;
use crate::policy::{request_host, RouteFacts};
use crate::respond;
use async_trait::async_trait;
use pingora::http::{RequestHeader, ResponseHeader};
use pingora::lb::{selection::RoundRobin, LoadBalancer};
use pingora::prelude::HttpPeer;
use pingora::proxy::{FailToProxy, ProxyHttp, Session};
use pingora::{Error, ErrorSource, ErrorType, Result};
use std::sync::Arc;

/// How a request's caller is found and checked against the lists.
pub struct Callers {
    /// Finds the client address behind trusted proxies.
    pub client_ip: ClientIpResolver,
    /// Verifies bearer tokens.
    pub jwt: Option<Arc<JwtVerifier>>,
    /// Allow- and deny-lists.
    pub access: AccessRules,
}

/// The Floodgate proxy logic.
pub struct Floodgate {
    callers: Callers,
    gate: Gate,
    upstream: Arc<LoadBalancer<RoundRobin>>,
    settings: UpstreamSettings,
    metrics: Arc<Metrics>,
}

/// Per-request state carried between pingora's phases.
#[derive(Default)]
pub struct RequestCtx {
    ratelimit: Option<RateLimitHeaders>,
    connect_attempts: usize,
}

impl Floodgate {
    /// The proxy for these parts.
    pub fn new(
        callers: Callers,
        gate: Gate,
        upstream: Arc<LoadBalancer<RoundRobin>>,
        settings: UpstreamSettings,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            callers,
            gate,
            upstream,
            settings,
            metrics,
        }
    }
}

impl Floodgate {
    /// Lists, identity, policies, limiter: what to do with the request in `session`.
    async fn decide(&self, session: &Session) -> Verdict {
        let req = session.req_header();
        let callers = &self.callers;
        let client_ip = callers.client_ip.resolve(peer_ip(session), &req.headers);
        let request = Request::new(
            &req.headers,
            req.uri.query(),
            client_ip,
            callers.jwt.as_deref(),
        );
        match callers.access.check(&request) {
            Access::Denied => {
                self.metrics.access.with_label_values(&["deny"]).inc();
                return refusal(403, "This client is not allowed.");
            }
            Access::Allowed => {
                self.metrics.access.with_label_values(&["allow"]).inc();
                return Verdict::Pass(None);
            }
            Access::Limited => {}
        }
        let host = match self.gate.needs_host() {
            true => request_host(&req.uri, req.headers.get(http::header::HOST)),
            false => None,
        };
        let route = RouteFacts {
            method: &req.method,
            host: host.as_deref(),
            path: req.uri.path(),
        };
        let planned = match self.gate.plan(&request, &route) {
            Ok(planned) => planned,
            Err(e) => {
                self.metrics.invalid_tokens.inc();
                log::debug!("refusing a request: {e}");
                return refusal(401, "The bearer token is not valid.");
            }
        };
        self.gate.check(&planned).await
    }
}

/// A refusal verdict that is not about rate.
fn refusal(status: u16, detail: &str) -> Verdict {
    match respond::refusal(status, detail) {
        Ok((header, body)) => Verdict::Refuse(Box::new(header), body),
        Err(e) => {
            log::error!("could not build a {status} response: {e}");
            Verdict::Pass(None)
        }
    }
}

fn peer_ip(session: &Session) -> Option<std::net::IpAddr> {
    session.client_addr()?.as_inet().map(|a| a.ip())
}

/// Answers the request with a problem body.
async fn write_problem(session: &mut Session, code: u16, detail: &str) -> Result<()> {
    let body = respond::problem_body(code, detail, serde_json::json!({}));
    let header = respond::problem_header(code, body.len())?;
    session
        .write_response_header(Box::new(header), false)
        .await?;
    session.write_response_body(Some(body), true).await
}

/// The status to answer an error with, and the upstream error kind it counts as, if any.
fn classify(e: &Error) -> (u16, Option<&'static str>) {
    use ErrorType::*;
    if let HTTPStatus(code) = e.etype() {
        return (*code, None);
    }
    match e.esource() {
        ErrorSource::Upstream => match e.etype() {
            ConnectTimedout | ReadTimedout | WriteTimedout => (504, Some("timeout")),
            ConnectRefused | ConnectNoRoute | ConnectError | SocketError => (502, Some("connect")),
            _ => (502, Some("other")),
        },
        ErrorSource::Downstream => match e.etype() {
            // The client is gone; nobody is left to answer.
            WriteError | ReadError | ConnectionClosed => (0, None),
            _ => (400, None),
        },
        ErrorSource::Internal | ErrorSource::Unset => (500, None),
    }
}

#[async_trait]
impl ProxyHttp for Floodgate {
    type CTX = RequestCtx;

    fn new_ctx(&self) -> Self::CTX {
        RequestCtx::default()
    }

    async fn request_filter(&self, session: &mut Session, ctx: &mut Self::CTX) -> Result<bool> {
        match self.decide(session).await {
            Verdict::Pass(headers) => {
                ctx.ratelimit = headers;
                Ok(false)
            }
            Verdict::Refuse(header, body) => {
                session.write_response_header(header, false).await?;
                session.write_response_body(Some(body), true).await?;
                Ok(true)
            }
        }
    }

    async fn upstream_peer(
        &self,
        _session: &mut Session,
        ctx: &mut Self::CTX,
    ) -> Result<Box<HttpPeer>> {
        ctx.connect_attempts += 1;
        // Round robin ignores the key.
        let backend = self
            .upstream
            .select(b"", 256)
            .ok_or_else(|| Error::explain(ErrorType::ConnectNoRoute, "no backend to select"))?;
        let mut peer = HttpPeer::new(backend, false, String::new());
        peer.options.connection_timeout = Some(self.settings.connect_timeout);
        peer.options.read_timeout = Some(self.settings.read_timeout);
        peer.options.write_timeout = Some(self.settings.write_timeout);
        Ok(Box::new(peer))
    }

    fn fail_to_connect(
        &self,
        _session: &mut Session,
        _peer: &HttpPeer,
        ctx: &mut Self::CTX,
        mut e: Box<Error>,
    ) -> Box<Error> {
        // Nothing was sent yet, so trying the next backend is safe; each is tried once.
        if ctx.connect_attempts < self.settings.backends.len() {
            e.set_retry(true);
        }
        e
    }

    async fn upstream_request_filter(
        &self,
        session: &mut Session,
        upstream_request: &mut RequestHeader,
        _ctx: &mut Self::CTX,
    ) -> Result<()> {
        use std::io::Write;
        if let Some(ip) = peer_ip(session) {
            let mut forwarded = Vec::with_capacity(64);
            if let Some(prior) = upstream_request.headers.get("x-forwarded-for") {
                forwarded.extend_from_slice(prior.as_bytes());
                forwarded.extend_from_slice(b", ");
            }
            // Writing to a Vec cannot fail.
            let _ = write!(forwarded, "{ip}");
            let value = http::HeaderValue::from_maybe_shared(bytes::Bytes::from(forwarded))
                .map_err(|_| Error::explain(ErrorType::InvalidHTTPHeader, "x-forwarded-for"))?;
            upstream_request.insert_header("x-forwarded-for", value)?;
        }
        Ok(())
    }

    async fn response_filter(
        &self,
        _session: &mut Session,
        upstream_response: &mut ResponseHeader,
        ctx: &mut Self::CTX,
    ) -> Result<()> {
        if let Some(headers) = ctx.ratelimit.take() {
            upstream_response.insert_header("ratelimit-policy", headers.policy)?;
            upstream_response.insert_header("ratelimit", headers.ratelimit)?;
        }
        Ok(())
    }

    async fn fail_to_proxy(
        &self,
        session: &mut Session,
        e: &Error,
        _ctx: &mut Self::CTX,
    ) -> FailToProxy {
        let (code, upstream_kind) = classify(e);
        if let Some(kind) = upstream_kind {
            self.metrics.count_upstream_error(kind);
        }
        if code > 0 {
            let detail = match upstream_kind {
                Some("timeout") => "The backend did not answer in time.",
                Some(_) => "The backend could not be reached or failed to answer.",
                None => "The request could not be proxied.",
            };
            if let Err(e) = write_problem(session, code, detail).await {
                log::debug!("could not send the error response: {e}");
            }
        }
        FailToProxy {
            error_code: code,
            can_reuse_downstream: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_failures_are_classified() {
        let refused = Error::new(ErrorType::ConnectRefused).into_up();
        assert_eq!(classify(&refused), (502, Some("connect")));
        let slow = Error::new(ErrorType::ReadTimedout).into_up();
        assert_eq!(classify(&slow), (504, Some("timeout")));
        let gone = Error::new(ErrorType::ConnectionClosed).into_down();
        assert_eq!(classify(&gone), (0, None));
    }
}
