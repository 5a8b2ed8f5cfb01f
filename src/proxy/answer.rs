//! What the proxy answers a request with before any backend: what a challenge solution earns,
//! the challenge page the gate asked for, or the gate's outcome rendered; `OPTIONS *` the gate
//! let through, answered here (it asks about the server, not a resource: no backend is
//! asked); and what later phases keep of the decision.

use super::render::Action;
use super::{challenge, decide, hygiene, robots, Floodgate, RequestCtx, Snapshot};
use crate::gate::Outcome;
use bytes::Bytes;
use http::header::{ALLOW, CONTENT_LENGTH};
use pingora::http::ResponseHeader;
use pingora::proxy::Session;
use std::sync::Arc;

/// The methods `OPTIONS *` is told the server allows: those it forwards (CONNECT is
/// refused).
const ALLOWED: &str = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS";

impl Floodgate {
    /// Keeps what later phases need of `outcome`.
    fn note_outcome(&self, outcome: &mut Outcome<'_>, ctx: &mut RequestCtx) {
        ctx.outcome = Some(outcome.kind());
        ctx.ticket = outcome.ticket();
        ctx.aftercare = outcome.take_aftercare();
        ctx.explained.note(outcome);
        let score = ctx.score.map(|s| s.value);
        let offenders = &self.offenders;
        match outcome {
            Outcome::Throttled(d) => {
                offenders.record_scored(d.identity, d.source, d.standing.policy, score)
            }
            Outcome::Busy(b) => offenders.record_scored(b.identity, b.source, b.policy, score),
            Outcome::Unpayable(u) => offenders.record_scored(u.identity, u.source, u.policy, score),
            Outcome::Blocked(block) => ctx.blocked_by = Some(block.reason.clone()),
            Outcome::Denied(policy) | Outcome::AllowedByRule(policy) => {
                ctx.ruled_by = Some(Arc::clone(policy));
            }
            Outcome::Challenged(challenged, _) => {
                ctx.ruled_by = Some(Arc::clone(challenged.policy));
            }
            _ => {}
        }
    }

    /// The answer to `session`'s request under `snapshot`: what a solution earns, the
    /// challenge page the gate asked for, or what the gate decided.
    pub(super) async fn answer(
        &self,
        snapshot: &Snapshot,
        session: &Session,
        ctx: &mut RequestCtx,
    ) -> Action {
        let room = snapshot.challenges.as_deref();
        if let Some(room) = room.filter(|r| r.receives(session.req_header().uri.path())) {
            let client = ctx.front.client.ip;
            let secure = ctx.front.came_over_https(session.req_header());
            let asker = (client, ctx.front.id());
            let (action, solved) =
                challenge::solution(room, session.req_header(), asker, secure).await;
            ctx.solved = Some(solved);
            return action;
        }
        let client = ctx.front.client;
        let secure = ctx.front.came_over_https(session.req_header());
        let mut decided = decide::decide(snapshot, session, &client, secure).await;
        ctx.earned = decided.earned.take();
        super::traced::decided(ctx.trace.as_mut(), &decided);
        ctx.bot = decided.traits.bot.take();
        ctx.ja4 = decided.traits.ja4;
        ctx.h2fp = decided.traits.h2fp.clone();
        ctx.h2fp_declined = decided.traits.h2fp_declined;
        ctx.score = decided.traits.score;
        ctx.proof = decided.proof;
        ctx.lesson = decided.lesson;
        ctx.robots = decided.traits.robots.take();
        ctx.explained.checked(&decided.decision.trail);
        // The pass's digest is for the access log and the decision's record only.
        let noted = snapshot.access_log.is_some() || snapshot.decisions.is_some();
        let logged = decided.pass.filter(|_| noted);
        ctx.pass = logged.map(|pass| pass.digest(snapshot.decider.gate().digest_key()));
        self.note_outcome(&mut decided.decision.outcome, ctx);
        let action = match (&decided.decision.outcome, room) {
            (Outcome::Challenged(challenged, _), Some(room)) => {
                let req = session.req_header();
                return challenge::page(room, challenged, req, client.ip, ctx.front.id());
            }
            (outcome, _) => snapshot.render(outcome, ctx.bot.as_ref()),
        };
        match action {
            Action::Forward(_) if hygiene::is_asterisk(session.req_header()) => server_options(),
            Action::Forward(_) if decided.spared.is_some() => robots::not_found(),
            Action::Forward(_) => self.admit(snapshot, session, ctx, &decided, action).await,
            refusal => refusal,
        }
    }
}

/// The answer to `OPTIONS *`: 200, the methods allowed, no body.
fn server_options() -> Action {
    let build = || -> pingora::Result<Box<ResponseHeader>> {
        let mut header = ResponseHeader::build(200, Some(2))?;
        header.insert_header(ALLOW, ALLOWED)?;
        header.insert_header(CONTENT_LENGTH, "0")?;
        Ok(Box::new(header))
    };
    match build() {
        Ok(header) => Action::Answer(header, Bytes::new()),
        Err(e) => {
            log::error!("could not build the answer to OPTIONS *: {e}");
            super::render::problem(500, Bytes::new(), &[])
        }
    }
}
