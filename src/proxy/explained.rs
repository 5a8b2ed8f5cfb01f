//! What the proxy keeps of each request's decision so it can be explained later
//! (`GET /v1/decisions/{ref}`): once the request has ended, the decision record built from the
//! request's record (the policies checked, the caller, the bucket, overload's admission, the
//! bot claim, fingerprints, pass, the decision) and its status, kept under the request id:
//! Floodgate's own, or a trusted proxy's (a client's own never is: see `request_id`). Nothing
//! is kept for an id outside the reference grammar: it could never be looked up.

use super::record::Via;
use super::{RequestState, Snapshot};
use crate::explain::{kept_path, Decisions, Record, Reference};
use pingora::proxy::Session;

/// Keeps the decision of the request in `session`, now ended with status `written`, in
/// `decisions` (what it needs of the request's record is taken out of it).
pub(super) fn keep(
    decisions: &Decisions,
    snapshot: &Snapshot,
    session: &Session,
    ctx: &mut RequestState,
    written: Option<u16>,
) {
    // Floodgate's own id was made with its reference; a trusted proxy's is read here.
    let own = ctx.front.own_id.take();
    let Some(reference) = own.or_else(|| {
        ctx.front
            .request_id
            .as_ref()
            .and_then(|(_, id)| Reference::of_request_id(id.as_bytes()))
    }) else {
        return;
    };
    let kept = ctx.record.take_for_keeping();
    let req = session.req_header();
    let route = ctx
        .upstream
        .pool()
        .and_then(|i| snapshot.upstream.pools().get(i))
        .map(|pool| pool.shared_name().clone());
    let now_ms = snapshot.decider.gate().clock().now_ms();
    let traits = kept.traits;
    let record = Record {
        reference,
        at_ms: now_ms,
        method: req.method.clone(),
        path: kept_path(req.uri.path()),
        route,
        steps: kept.steps.steps,
        caller: kept.caller,
        bucket: kept.steps.bucket,
        bot: traits.bot.map(Box::new),
        ja4: traits.ja4,
        h2fp: traits.h2fp,
        score: traits.score,
        pass: kept.pass,
        proof: kept.proof,
        privacy_pass: kept.via == Some(Via::PrivacyPass),
        robots: traits.robots.map(Box::new),
        overload: kept.overload,
        blocked_by: kept.blocked_by,
        decision: kept.decision,
        status: written.unwrap_or(0),
    };
    decisions.keep(record, now_ms);
}
