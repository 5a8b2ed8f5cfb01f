//! Responses under way: upgraded connections (WebSocket) live by `upstream.idle_timeout`, not
//! `read_timeout`; and a backend that fails once the response has started gets the client's
//! response aborted the way its protocol says "failed" (HTTP/1.1: the connection closes
//! without the terminating chunk or short of `Content-Length`; HTTP/2: `RST_STREAM`), never
//! finished with an error body inside it.

use super::failure::Failure;
use crate::telemetry::{ByLabel, UpstreamErrorKind};
use pingora::prelude::HttpPeer;
use pingora::protocols::ALPN;
use pingora::proxy::Session;
use pingora::Error;
use std::time::Duration;

/// For an upgrade request (`Upgrade: websocket`): both directions may idle for `idle`, and the
/// backend is spoken to in HTTP/1.1, the only version that upgrades this way. The wait for
/// the backend's `101` is bounded by `idle` too (pingora sets a connection's timeouts once).
pub(super) fn prepare_upgrade(session: &mut Session, peer: &mut HttpPeer, idle: Duration) {
    if session.is_upgrade_req() {
        session.set_read_timeout(Some(idle));
        peer.options.read_timeout = Some(idle);
        peer.options.alpn = ALPN::H1;
    }
}

/// Whether the response to the client has started (a final header, or a `101`, was written).
pub(super) fn started(session: &Session) -> bool {
    session
        .response_written()
        .is_some_and(|r| !r.status.is_informational() || r.status == 101)
}

/// If the response had started when `e` (counted as `failure`) ended the request, aborts it
/// and returns true: a backend failure is counted `aborted` in `errors` and logged once (with
/// the request id `id`). Otherwise leaves the session alone: an error answer may still be
/// written.
pub(super) async fn abort_if_started(
    session: &mut Session,
    e: &Error,
    failure: Failure,
    errors: &ByLabel<UpstreamErrorKind>,
    id: &str,
) -> bool {
    if !started(session) {
        return false;
    }
    let status = session.response_written().map_or(0, |r| r.status.as_u16());
    let req = session.req_header();
    if failure.upstream.is_some() {
        errors.inc(UpstreamErrorKind::Aborted);
        log::warn!(
            "{} {} id={id}: the backend failed after the {status} response had started ({e}); \
             the response was aborted",
            req.method,
            req.uri.path()
        );
    } else {
        log::debug!(
            "{} {} id={id}: response aborted: {e}",
            req.method,
            req.uri.path()
        );
    }
    session.shutdown().await;
    true
}
