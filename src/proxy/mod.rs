//! `impl ProxyHttp`: read the request's facts, let the gate decide, render its outcome,
//! forward to a backend of the pool the request's route names (in the snapshot that was live
//! when the request arrived), tell the pool how its backend did, and report.

mod access_log;
mod acme;
mod answer;
mod challenge;
mod connection;
mod context;
mod decide;
mod drain;
mod edits;
mod ended;
mod explained;
mod failure;
mod forwarding;
mod front;
mod grpc;
mod h2fp;
mod head_watch;
mod header_case;
mod header_guard;
mod hygiene;
mod passthrough;
mod pick;
mod preface;
mod record;
mod render;
mod request_id;
mod response;
mod robots;
mod seen;
mod shed;
mod snapshot;
mod streams;
mod traced;
mod upstream;
mod watched;

pub use access_log::{AccessLog, AccessLogSettings, LogFormat};
pub use connection::ConnectionLimits;
pub use context::RequestCtx;
use context::RequestState;
pub use front::FrontSettings;
pub use h2fp::{connection_h2fp, first_frames, FirstFrames, FirstFramesStream};
pub use head_watch::{HeadWatch, HeadWatches, RefusedHead, REFUSED_HEAD_BYTES, SWEEP_EVERY};
pub use header_guard::HeaderGuard;
pub use preface::{sniff, Preface};
pub use render::Handling;
pub use snapshot::Snapshot;
pub use upstream::{
    ActiveCheck, Attempts, Backend, Balance, HealthSettings, Pool, PoolRoute, PoolSettings,
    ScoreHeaders, Upstream, UpstreamError, UpstreamSettings, DEFAULT_POOL,
};
pub use watched::{head_watch, peer_ip, HeadTap, WatchedStream};

use crate::telemetry::{Metrics, Offenders, UpstreamErrorKind};
use arc_swap::ArcSwap;
use async_trait::async_trait;
use http::HeaderName;
use pingora::http::{RequestHeader, ResponseHeader};
use pingora::prelude::HttpPeer;
use pingora::protocols::Digest;
use pingora::proxy::{FailToProxy, ProxyHttp, Session};
use pingora::{Error, Result};
use std::sync::Arc;
use std::time::Instant;

const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");
const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");

/// The Floodgate proxy logic.
pub struct Floodgate {
    snapshot: Arc<ArcSwap<Snapshot>>,
    metrics: Arc<Metrics>,
    offenders: Arc<Offenders>,
    /// Whether connections stay open between requests (the listener's sweep ends idle ones).
    keepalive: bool,
    /// The ACME validations' answers (HTTP-01 tokens), when `[tls.acme]` is configured.
    acme: Option<Arc<crate::acme::Answers>>,
}

impl Floodgate {
    /// The proxy serving whatever `snapshot` holds (a reload swaps it), counting throttled
    /// callers in `offenders`, keeping connections alive as `limits` say.
    pub fn new(
        snapshot: Arc<ArcSwap<Snapshot>>,
        metrics: Arc<Metrics>,
        offenders: Arc<Offenders>,
        limits: &ConnectionLimits,
    ) -> Self {
        Self {
            snapshot,
            metrics,
            offenders,
            keepalive: limits.keeps_alive(),
            acme: None,
        }
    }

    /// The same proxy, answering ACME HTTP-01 validations from `answers` before anything
    /// else (the CA's validators come from anywhere, as often as they like).
    pub fn with_acme(mut self, answers: Arc<crate::acme::Answers>) -> Self {
        self.acme = Some(answers);
        self
    }
}

/// Whether HTTP/1 header names keep their sender's case under `snapshot`.
fn keeps_case(snapshot: &Snapshot) -> bool {
    snapshot.front.preserve_header_case
}

#[async_trait]
impl ProxyHttp for Floodgate {
    type CTX = RequestCtx;

    fn new_ctx(&self) -> Self::CTX {
        // Loaded once the request's head is in (pingora makes the context then).
        RequestCtx::new(self.snapshot.load_full())
    }

    async fn early_request_filter(&self, session: &mut Session, ctx: &mut Self::CTX) -> Result<()> {
        let ctx: &mut RequestState = ctx;
        connection::head_complete(session);
        // Pingora keeps HTTP/1.1 connections open with no idle limit; the listener's sweep
        // closes idle ones (`server.keepalive_timeout`), or none stays open.
        if !self.keepalive {
            session.set_keepalive(None);
        }
        // Pipelined requests are answered in order (RFC 9112 §9.3.2).
        session.set_pipelining_enabled(true);
        let snapshot = &ctx.snapshot;
        ctx.started = snapshot.access_log.is_some().then(Instant::now);
        // The client is resolved once, here, for every phase of the request.
        let client = snapshot
            .decider
            .callers()
            .client_ip
            .client(decide::peer_ip(session), &session.req_header().headers);
        ctx.front = front::Front::begin(&snapshot.front, session, client);
        ctx.trace = traced::begin(snapshot, session, client.trusted_peer);
        hygiene::check(session.req_header_mut(), &ctx.snapshot.guard)
    }

    async fn request_filter(&self, session: &mut Session, ctx: &mut Self::CTX) -> Result<bool> {
        let snapshot = ctx.snapshot.clone();
        let action = match self.acme_answer(session).await {
            Some(validation) => validation,
            None => match robots::robots_txt(&snapshot, session, ctx).await {
                Some(robots_txt) => robots_txt,
                None => self.answer(&snapshot, session, ctx).await,
            },
        };
        match action {
            Handling::Forward(headers) => {
                ctx.ratelimit = headers;
                Ok(false)
            }
            Handling::Answer(mut header, body) => {
                // A pass a Privacy Pass token earned goes back even with a refusal.
                if let Some(cookie) = &ctx.earned {
                    header.append_header(http::header::SET_COOKIE, cookie.as_str())?;
                }
                front::write_answer(session, &ctx.front, header, body).await?;
                Ok(true)
            }
        }
    }

    async fn upstream_peer(
        &self,
        session: &mut Session,
        ctx: &mut Self::CTX,
    ) -> Result<Box<HttpPeer>> {
        let ctx: &mut RequestState = ctx;
        ctx.upstream_started.get_or_insert_with(Instant::now);
        let snapshot = &ctx.snapshot;
        let caller = ctx.record.caller().map(|c| c.stable);
        let client_ip = ctx.front.client.ip;
        let mut peer = pick::peer(snapshot, session, caller, client_ip, &mut ctx.upstream)?;
        streams::prepare_upgrade(session, &mut peer, snapshot.upstream.idle_timeout());
        Ok(peer)
    }

    fn fail_to_connect(
        &self,
        _session: &mut Session,
        _peer: &HttpPeer,
        ctx: &mut Self::CTX,
        mut e: Box<Error>,
    ) -> Box<Error> {
        let ctx: &mut RequestState = ctx;
        // Nothing was sent yet, so trying the next backend of the pool is safe; each is
        // tried once.
        let upstream = &ctx.snapshot.upstream;
        upstream.failed(&mut ctx.upstream);
        if upstream.may_retry(&ctx.upstream) {
            e.set_retry(true);
        }
        e
    }

    async fn connected_to_upstream(
        &self,
        _session: &mut Session,
        _reused: bool,
        peer: &HttpPeer,
        fd: std::os::unix::io::RawFd,
        _digest: Option<&Digest>,
        ctx: &mut Self::CTX,
    ) -> Result<()> {
        // A request holding slots keeps a second handle on its connection, to wait for the
        // backend's answer should its client leave first (drain.rs).
        if ctx.slot.is_some() || !ctx.aftercare.is_empty() {
            ctx.backend_line = drain::keep(fd, peer.options.read_timeout);
        }
        Ok(())
    }

    async fn upstream_request_filter(
        &self,
        session: &mut Session,
        upstream_request: &mut RequestHeader,
        ctx: &mut Self::CTX,
    ) -> Result<()> {
        // An HTTP/2 connection is shared: its stream is reset, not drained (drain.rs).
        if upstream_request.version == http::Version::HTTP_2 {
            ctx.backend_line = None;
        }
        let snapshot = &ctx.snapshot;
        let host = snapshot.upstream.host(&ctx.upstream);
        let mut edits = forwarding::edits(session, upstream_request, &ctx.front, host)?;
        if let Some(header) = snapshot.upstream.ja4_header() {
            forwarding::ja4(&mut edits, header, ctx.record.traits().ja4);
        }
        if let Some(header) = snapshot.upstream.h2fp_header() {
            forwarding::h2fp(&mut edits, header, ctx.record.traits().h2fp.as_ref());
        }
        forwarding::score(
            &mut edits,
            snapshot.upstream.score_headers(),
            ctx.record.traits().score,
        );
        forwarding::no_underscore_spellings(&mut edits, upstream_request, &snapshot.guard);
        forwarding::no_private_token(&mut edits, upstream_request);
        edits.apply_to_request(upstream_request, keeps_case(snapshot))?;
        traced::to_upstream(ctx, upstream_request)
    }

    async fn response_filter(
        &self,
        _session: &mut Session,
        upstream_response: &mut ResponseHeader,
        ctx: &mut Self::CTX,
    ) -> Result<()> {
        let ctx: &mut RequestState = ctx;
        if let Some(started) = ctx.upstream_started {
            let took = started.elapsed();
            self.metrics.upstream_seconds.observe(took.as_secs_f64());
            let status = upstream_response.status.as_u16();
            if let Some(slot) = &ctx.slot {
                slot.answered_in(took);
            }
            // An upgraded connection (WebSocket) holds no backend worker: its slot goes back.
            if status == 101 {
                ctx.slot = None;
                ctx.backend_line = None;
            }
            self.metrics.count_upstream_response(status);
            // A 5xx (or a switch of protocols) counts now; any other answer once it has
            // arrived whole (`logging`), so one cut short counts as a failure (`fail_to_proxy`).
            if status >= 500 || status == 101 {
                ctx.snapshot.upstream.answered(&mut ctx.upstream, status);
            }
        }
        // What the answer proves of the request's credential; its proof header never reaches
        // the client.
        if let Some(proofs) = &ctx.snapshot.proofs {
            let status = upstream_response.status.as_u16();
            if let Some(lesson) = ctx.lesson.take().filter(|_| status >= 200) {
                proofs.learn(&lesson, status, &upstream_response.headers);
            }
            for name in proofs.proof_headers() {
                upstream_response.remove_header(name);
            }
        }
        let mut edits = response::edits(upstream_response, &ctx.front);
        // The pass a Privacy Pass token earned goes back with the backend's answer.
        if let Some(cookie) = &ctx.earned {
            upstream_response.append_header(http::header::SET_COOKIE, cookie.as_str())?;
            // One client's pass must never be stored by a shared cache and handed to others.
            edits.set(
                http::header::CACHE_CONTROL,
                http::HeaderValue::from_static("private, no-store"),
            );
        }
        // One caller's quota must not be stored by a shared cache and handed to others.
        let shared = response::shared_cacheable(upstream_response, &edits, ctx.front.authorized);
        if let Some(headers) = ctx.ratelimit.take().filter(|_| !shared) {
            edits.set(RATELIMIT_POLICY, headers.policy);
            edits.set(RATELIMIT, headers.ratelimit);
        }
        edits.apply_to_response(upstream_response, keeps_case(&ctx.snapshot))?;
        // Settled before the client sees the answer, so its next request sees the bucket
        // settled; an informational answer (but a protocol switch) is not the final one.
        let status = upstream_response.status;
        let is_final =
            !status.is_informational() || status == http::StatusCode::SWITCHING_PROTOCOLS;
        if is_final && !ctx.aftercare.is_empty() {
            ctx.aftercare
                .on_response(status.as_u16(), &upstream_response.headers)
                .await;
        }
        Ok(())
    }

    fn upstream_response_body_filter(
        &self,
        _session: &mut Session,
        _body: &mut Option<bytes::Bytes>,
        end_of_stream: bool,
        ctx: &mut Self::CTX,
    ) -> Result<Option<std::time::Duration>> {
        // The backend is done with the request once its answer is in: the slot goes to the
        // next request waiting, not after the client has read it all.
        if end_of_stream {
            ctx.slot = None;
            ctx.backend_line = None;
            traced::upstream_ended(ctx);
        }
        Ok(None)
    }

    async fn response_trailer_filter(
        &self,
        _session: &mut Session,
        upstream_trailers: &mut http::HeaderMap,
        ctx: &mut Self::CTX,
    ) -> Result<Option<bytes::Bytes>> {
        if !ctx.aftercare.is_empty() {
            ctx.aftercare.on_trailers(upstream_trailers).await;
        }
        Ok(None)
    }

    async fn fail_to_proxy(
        &self,
        session: &mut Session,
        e: &Error,
        ctx: &mut Self::CTX,
    ) -> FailToProxy {
        let ctx: &mut RequestState = ctx;
        let failure = failure::classify(e);
        // Before or after the response started: a backend that cuts its responses short is
        // ejected like one that refuses them.
        if failure.upstream.is_some() {
            ctx.snapshot.upstream.failed(&mut ctx.upstream);
        }
        let errors = &self.metrics.upstream_errors;
        if streams::abort_if_started(session, e, failure, errors, ctx.front.id()).await {
            return FailToProxy {
                error_code: 0,
                can_reuse_downstream: false,
            };
        }
        if let Some(kind) = failure.upstream {
            self.metrics.upstream_errors.inc(kind);
        }
        // A backend that timed out took at least that long: the overload watch learns it.
        if let (Some(slot), Some(UpstreamErrorKind::Timeout), Some(started)) =
            (&ctx.slot, failure.upstream, ctx.upstream_started)
        {
            slot.answered_in(started.elapsed());
        }
        if let Some(status) = failure.status {
            // The connection closes after this answer, and the answer says so.
            session.set_keepalive(None);
            if let Err(e) = failure::write_problem(session, status, failure, e, &ctx.front).await {
                log::debug!("could not send the error response: {e}");
            }
        }
        FailToProxy {
            error_code: failure.status.unwrap_or(0),
            can_reuse_downstream: false,
        }
    }

    fn suppress_error_log(&self, session: &Session, _ctx: &Self::CTX, e: &Error) -> bool {
        // An aborted response was logged once already.
        failure::is_client_error(e) || streams::started(session)
    }

    async fn logging(&self, session: &mut Session, e: Option<&Error>, ctx: &mut Self::CTX) {
        self.ended(session, e, ctx).await;
    }
}
