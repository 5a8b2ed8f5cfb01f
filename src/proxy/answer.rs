//! What the proxy answers a request with before any backend: what a challenge solution earns,
//! the challenge page the gate asked for, or the gate's outcome rendered; and what later
//! phases keep of the decision.

use super::render::Action;
use super::{challenge, decide, Floodgate, RequestCtx, Snapshot};
use crate::gate::Outcome;
use pingora::proxy::Session;
use std::sync::Arc;

impl Floodgate {
    /// Keeps what later phases need of `outcome`.
    fn note_outcome(&self, outcome: &mut Outcome<'_>, ctx: &mut RequestCtx) {
        ctx.outcome = Some(outcome.kind());
        ctx.ticket = outcome.ticket();
        ctx.aftercare = outcome.take_aftercare();
        ctx.explained.note(outcome);
        match outcome {
            Outcome::Throttled(d) => self
                .offenders
                .record(d.identity, d.source, d.standing.policy),
            Outcome::Busy(b) => self.offenders.record(b.identity, b.source, b.policy),
            Outcome::Unpayable(u) => self.offenders.record(u.identity, u.source, u.policy),
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
            let client = snapshot
                .decider
                .callers
                .client_ip
                .resolve(decide::peer_ip(session), &session.req_header().headers);
            let secure = ctx.front.came_over_https(session.req_header());
            let asker = (client, ctx.front.id());
            let (action, solved) =
                challenge::solution(room, session.req_header(), asker, secure).await;
            ctx.solved = Some(solved);
            return action;
        }
        let mut decision = decide::decide(snapshot, session).await;
        ctx.bot = decision.traits.bot.take();
        ctx.ja4 = decision.traits.ja4;
        ctx.h2fp = decision.traits.h2fp.clone();
        ctx.explained.checked(&decision.trail);
        // The pass's digest is for the access log and the decision's record only.
        let noted = snapshot.access_log.is_some() || snapshot.decisions.is_some();
        let logged = decision.pass.filter(|_| noted);
        ctx.pass = logged.map(|pass| pass.digest(snapshot.decider.gate.digest_key()));
        self.note_outcome(&mut decision.outcome, ctx);
        let action = match (&decision.outcome, room) {
            (Outcome::Challenged(challenged, _), Some(room)) => {
                let req = session.req_header();
                return challenge::page(room, challenged, req, decision.client_ip, ctx.front.id());
            }
            (outcome, _) => snapshot.render(outcome, ctx.bot.as_ref()),
        };
        match action {
            Action::Forward(_) => self.admit(snapshot, session, ctx, &decision, action).await,
            refusal => refusal,
        }
    }
}
