//! The access log: one line per request, when `server.access_log` is on, naming the caller by
//! the first twelve hex digits of its identity digest, never in the clear.

use super::RequestCtx;
use crate::gate::OutcomeKind;
use pingora::proxy::Session;
use std::time::Instant;

/// Writes the line of the request `session` served with status `written`, that started at
/// `started`.
pub(super) fn write(session: &Session, ctx: &RequestCtx, written: Option<u16>, started: Instant) {
    let req = session.req_header();
    let identity = ctx
        .ticket
        .as_ref()
        .map(|t| t.identity.hex())
        .unwrap_or_default();
    log::info!(
        target: "floodgate::access",
        "{} {} status={} decision={} policy={} identity={} id={} ms={:.3}",
        req.method,
        req.uri.path(),
        written.unwrap_or(0),
        ctx.outcome.map_or("", OutcomeKind::label),
        ctx.ticket.as_ref().map_or("-", |t| &*t.policy),
        identity.get(..12).unwrap_or("-"),
        ctx.front.id(),
        started.elapsed().as_secs_f64() * 1000.0
    );
}
