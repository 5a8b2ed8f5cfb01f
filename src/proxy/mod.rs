//! `impl ProxyHttp`: decide (lists, identity, policies, limiter), forward round robin to the
//! backends of the config that was live when the request arrived, report.

mod decide;
mod failure;

pub use decide::Callers;

use crate::active::Active;
use crate::gate::{Action, RateLimitHeaders};
use crate::identity::Identity;
use crate::metrics::Metrics;
use crate::offenders::Offenders;
use arc_swap::ArcSwap;
use async_trait::async_trait;
use pingora::http::{RequestHeader, ResponseHeader};
use pingora::prelude::HttpPeer;
use pingora::proxy::{FailToProxy, ProxyHttp, Session};
use pingora::{Error, ErrorType, Result};
use std::sync::Arc;
use std::time::Instant;

/// The Floodgate proxy logic.
pub struct Floodgate {
    active: Arc<ArcSwap<Active>>,
    metrics: Arc<Metrics>,
    offenders: Arc<Offenders>,
}

/// Per-request state carried between pingora's phases.
pub struct RequestCtx {
    /// The config this request runs under, start to finish, whatever reloads happen meanwhile.
    active: Option<Arc<Active>>,
    ratelimit: Option<RateLimitHeaders>,
    connect_attempts: usize,
    started: Instant,
    upstream_started: Option<Instant>,
    decision: &'static str,
    policy: Option<Arc<str>>,
    identity: Option<Identity>,
}

impl Floodgate {
    /// The proxy serving whatever `active` holds (a reload swaps it), counting throttled
    /// callers in `offenders`.
    pub fn new(
        active: Arc<ArcSwap<Active>>,
        metrics: Arc<Metrics>,
        offenders: Arc<Offenders>,
    ) -> Self {
        Self {
            active,
            metrics,
            offenders,
        }
    }
}

impl RequestCtx {
    fn active(&self) -> Result<&Arc<Active>> {
        self.active.as_ref().ok_or_else(|| {
            Error::explain(ErrorType::InternalError, "no config loaded for the request")
        })
    }
}

#[async_trait]
impl ProxyHttp for Floodgate {
    type CTX = RequestCtx;

    fn new_ctx(&self) -> Self::CTX {
        RequestCtx {
            active: None,
            ratelimit: None,
            connect_attempts: 0,
            started: Instant::now(),
            upstream_started: None,
            decision: "",
            policy: None,
            identity: None,
        }
    }

    async fn request_filter(&self, session: &mut Session, ctx: &mut Self::CTX) -> Result<bool> {
        let active = self.active.load_full();
        let verdict = decide::decide(&active, &self.metrics, session).await;
        ctx.active = Some(active);
        ctx.decision = verdict.decision;
        ctx.identity = verdict.identity;
        if let (true, Some(identity), Some(policy)) = (
            verdict.decision == "throttled",
            verdict.identity,
            &verdict.policy,
        ) {
            self.offenders.record(identity, policy);
        }
        ctx.policy = verdict.policy;
        match verdict.action {
            Action::Pass(headers) => {
                ctx.ratelimit = headers;
                Ok(false)
            }
            Action::Refuse(header, body) => {
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
        ctx.upstream_started.get_or_insert_with(Instant::now);
        let active = ctx.active()?;
        // Round robin ignores the key.
        let backend = active
            .upstream
            .select(b"", 256)
            .ok_or_else(|| Error::explain(ErrorType::ConnectNoRoute, "no backend to select"))?;
        let settings = &active.upstream_settings;
        let tls_name = backend
            .addr
            .as_inet()
            .and_then(|addr| active.tls_names.get(addr));
        let mut peer = match tls_name {
            Some(name) => HttpPeer::new(backend, true, name.clone()),
            None => HttpPeer::new(backend, false, String::new()),
        };
        peer.options.connection_timeout = Some(settings.connect_timeout);
        peer.options.read_timeout = Some(settings.read_timeout);
        peer.options.write_timeout = Some(settings.write_timeout);
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
        let backends = ctx
            .active()
            .map_or(1, |a| a.upstream_settings.backends.len());
        if ctx.connect_attempts < backends {
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
        if let Some(ip) = decide::peer_ip(session) {
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
        if let Some(started) = ctx.upstream_started {
            self.metrics
                .upstream_seconds
                .observe(started.elapsed().as_secs_f64());
            self.metrics
                .count_upstream_response(upstream_response.status.as_u16());
        }
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
        let (code, upstream_kind) = failure::classify(e);
        if let Some(kind) = upstream_kind {
            self.metrics.count_upstream_error(kind);
        }
        if code > 0 {
            let detail = match upstream_kind {
                Some("timeout") => "The backend did not answer in time.",
                Some(_) => "The backend could not be reached or failed to answer.",
                None => "The request could not be proxied.",
            };
            if let Err(e) = failure::write_problem(session, code, detail).await {
                log::debug!("could not send the error response: {e}");
            }
        }
        FailToProxy {
            error_code: code,
            can_reuse_downstream: false,
        }
    }

    async fn logging(&self, session: &mut Session, _e: Option<&Error>, ctx: &mut Self::CTX) {
        if !ctx.active.as_ref().is_some_and(|a| a.access_log) {
            return;
        }
        let req = session.req_header();
        let status = session.response_written().map_or(0, |r| r.status.as_u16());
        let identity = ctx.identity.map(|id| id.hex()).unwrap_or_default();
        log::info!(
            target: "floodgate::access",
            "{} {} status={} decision={} policy={} identity={} ms={:.3}",
            req.method,
            req.uri.path(),
            status,
            ctx.decision,
            ctx.policy.as_deref().unwrap_or("-"),
            identity.get(..12).unwrap_or("-"),
            ctx.started.elapsed().as_secs_f64() * 1000.0
        );
    }
}
