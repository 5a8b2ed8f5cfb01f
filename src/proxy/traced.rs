//! The proxy's side of traces (`crate::trace`): each phase notes what the request's spans
//! need (when it began, the store call, the upstream), and the logging phase hands the
//! finished trace to the tracer with what the span says of the request (read from its
//! record), if it is kept.

use super::decide::DecidedRequest;
use super::front::via_version;
use super::{RequestState, Snapshot};
use crate::trace::{RequestTrace, SpanFacts, Timed, TRACEPARENT, TRACESTATE};
use pingora::http::RequestHeader;
use pingora::proxy::Session;
use pingora::{Error, Result};
use std::time::Instant;

/// The trace of the request in `session`, when `snapshot` traces; a `trusted` peer's
/// `traceparent` names its parent.
pub(super) fn begin(snapshot: &Snapshot, session: &Session, trusted: bool) -> Option<RequestTrace> {
    let tracer = snapshot.tracer.as_ref()?;
    let headers = &session.req_header().headers;
    let wall = snapshot.decider.gate().clock().now();
    Some(tracer.begin(headers, trusted, wall, Instant::now()))
}

/// Notes when the gate's store call began and ended, for the trace.
pub(super) fn decided(trace: Option<&mut RequestTrace>, decided: &DecidedRequest<'_>) {
    let Some(trace) = trace else {
        return;
    };
    trace.store_call(decided.store.map(|t| Timed {
        began: t.began,
        ended: t.ended,
    }));
}

/// Sets the backend's `traceparent` (naming the upstream span, which begins now) and
/// `tracestate` (a trusted caller's; an untrusted one's is not passed on).
pub(super) fn to_upstream(
    ctx: &mut RequestState,
    upstream_request: &mut RequestHeader,
) -> Result<()> {
    let tracer = ctx.snapshot.tracer.as_ref();
    let (Some(tracer), Some(trace)) = (tracer, ctx.trace.as_mut()) else {
        return Ok(());
    };
    let (parent, state) = tracer.to_upstream(trace, Instant::now());
    upstream_request.insert_header(TRACEPARENT, parent)?;
    match state {
        Some(state) => upstream_request.insert_header(TRACESTATE, state)?,
        None => {
            upstream_request.remove_header(&TRACESTATE);
        }
    }
    Ok(())
}

/// The backend's answer has ended.
pub(super) fn upstream_ended(ctx: &mut RequestState) {
    if let Some(trace) = ctx.trace.as_mut() {
        trace.upstream_ended(Instant::now());
    }
}

/// Hands the request's trace to the tracer, if it is kept: answered `written`, failed with
/// `e`.
pub(super) fn finish(
    session: &Session,
    ctx: &mut RequestState,
    written: Option<u16>,
    e: Option<&Error>,
) {
    let Some(trace) = ctx.trace.take() else {
        return;
    };
    // Forwarded, or a challenge solution: the allowed requests' ratio; Floodgate's own
    // answers (refusals, bad requests, shed): the refusals'.
    let refused = ctx.upstream_started.is_none() && !ctx.record.is_solution();
    if !trace.sampled(refused) {
        return;
    }
    let snapshot = &ctx.snapshot;
    let Some(tracer) = snapshot.tracer.as_ref() else {
        return;
    };
    let facts = facts(snapshot, session, ctx, written, e);
    tracer.send(trace.finish(facts, Instant::now()));
}

/// The host and port the client asked for: the target's authority, or `Host`.
fn authority(req: &RequestHeader) -> Option<(String, Option<u16>)> {
    let authority = match req.uri.authority() {
        Some(authority) => authority.clone(),
        None => {
            let host = req.headers.get(http::header::HOST)?.to_str().ok()?;
            host.parse::<http::uri::Authority>().ok()?
        }
    };
    Some((authority.host().to_owned(), authority.port_u16()))
}

/// What the server span says of the request.
fn facts(
    snapshot: &Snapshot,
    session: &Session,
    ctx: &RequestState,
    written: Option<u16>,
    e: Option<&Error>,
) -> SpanFacts {
    let req = session.req_header();
    let header = |name: http::HeaderName| {
        req.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let record = &ctx.record;
    let caller = record.caller();
    let traits = record.traits();
    SpanFacts {
        decision: record.decision(),
        policy: record.policy().cloned(),
        identity_source: caller.and_then(|c| c.source.clone()),
        bot_category: traits.bot.as_ref().map(|claim| claim.category().word()),
        score: traits.score.map(|s| f64::from(s.value)),
        reference: ctx.front.id().to_owned(),
        method: req.method.as_str().to_owned(),
        path: req.uri.path().to_owned(),
        scheme: if ctx.front.came_over_https(req) {
            "https"
        } else {
            "http"
        },
        route: None,
        status: written,
        server: authority(req),
        client_address: ctx.front.client.ip,
        protocol_version: via_version(req.version),
        user_agent: header(http::header::USER_AGENT),
        error: e.map(|e| e.etype().as_str().to_owned()),
        backend: snapshot.upstream.host(&ctx.upstream).map(str::to_owned),
    }
}
