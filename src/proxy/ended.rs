//! What is done once a request has ended, however it ended: the backend's whole answer
//! counted, what is still open settled and the slots given back, then the request's record
//! read by the metrics, the access log, the trace and the decision records.

use super::{connection, drain, explained, traced, Floodgate, RequestState};
use pingora::proxy::Session;
use pingora::Error;

impl Floodgate {
    /// The end of the request in `session` (failed with `e`, if it failed): pingora's
    /// logging phase.
    pub(super) async fn ended(
        &self,
        session: &mut Session,
        e: Option<&Error>,
        ctx: &mut RequestState,
    ) {
        let written = session.response_written().map(|r| r.status.as_u16());
        // A backend's answer that arrived whole counts as its success (a failure was counted
        // already, by `fail_to_proxy` or `response_filter`).
        if let (Some(status), None) = (written, e) {
            ctx.snapshot.upstream.answered(&mut ctx.upstream, status);
        }
        // However the request ended: what is still open settles, the slots go back; when the
        // client left before the backend's answer ended, once the backend is done (drain.rs).
        let (line, slot) = (ctx.backend_line.take(), ctx.slot.take());
        let aftercare = std::mem::take(&mut ctx.aftercare);
        drain::settle(e, line, slot, aftercare, written).await;
        connection::request_done(session);
        if let Some(decision) = ctx.record.decision() {
            self.metrics.decisions.inc(decision);
        }
        let log = ctx.snapshot.access_log.clone();
        if let (Some(log), Some(started)) = (log, ctx.started) {
            log.write(session, ctx, written, started);
        }
        traced::finish(session, ctx, written, e);
        let snapshot = ctx.snapshot.clone();
        if let Some(decisions) = &snapshot.decisions {
            explained::keep(decisions, &snapshot, session, ctx, written);
        }
    }
}
