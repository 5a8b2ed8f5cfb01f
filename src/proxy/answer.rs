//! What the proxy answers a request with before any backend: what a challenge solution earns,
//! the challenge page the gate asked for, or the gate's outcome rendered; `OPTIONS *` the gate
//! let through, answered here (it asks about the server, not a resource: no backend is
//! asked); and what later phases keep of the decision.

use super::decide::DecidedRequest;
use super::record::{Learnt, Record};
use super::render::Handling;
use super::{challenge, decide, hygiene, robots, Floodgate, RequestState, Snapshot};
use crate::gate::Outcome;
use bytes::Bytes;
use http::header::{ALLOW, CONTENT_LENGTH};
use pingora::http::ResponseHeader;
use pingora::proxy::Session;

/// The methods `OPTIONS *` is told the server allows: those it forwards (CONNECT is
/// refused).
const ALLOWED: &str = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS";

impl Floodgate {
    /// Keeps what later phases need of `outcome`, and the request's record built from it and
    /// from `learnt`; counts an offender.
    fn note_outcome(
        &self,
        decided: &mut DecidedRequest<'_>,
        learnt: Learnt,
        ctx: &mut RequestState,
    ) {
        let decision = &mut decided.decision;
        ctx.aftercare = decision.outcome.take_aftercare();
        ctx.record = Record::decided(&decision.outcome, &decision.trail, learnt);
        let record = &ctx.record;
        if let Some(caller) = record.offender() {
            let score = record.traits().score.map(|s| s.value);
            let source = caller.source.as_ref();
            let offenders = &self.offenders;
            offenders.record_scored(caller.identity, source, &caller.policy, score);
        }
    }

    /// The answer to `session`'s request under `snapshot`: what a solution earns, the
    /// challenge page the gate asked for, or what the gate decided.
    pub(super) async fn answer(
        &self,
        snapshot: &Snapshot,
        session: &Session,
        ctx: &mut RequestState,
    ) -> Handling {
        let room = snapshot.challenges.as_deref();
        if let Some(room) = room.filter(|r| r.receives(session.req_header().uri.path())) {
            let client = ctx.front.client.ip;
            let secure = ctx.front.came_over_https(session.req_header());
            let asker = (client, ctx.front.id());
            let (action, solved) =
                challenge::solution(room, session.req_header(), asker, secure).await;
            ctx.record = Record::answered(solved.decision());
            return action;
        }
        let client = ctx.front.client;
        let secure = ctx.front.came_over_https(session.req_header());
        let mut decided = decide::decide(snapshot, session, &client, secure).await;
        ctx.earned = decided.earned.take();
        super::traced::decided(ctx.trace.as_mut(), &decided);
        ctx.lesson = decided.lesson.take();
        // The pass's digest is for the access log and the decision's record only.
        let noted = snapshot.access_log.is_some() || snapshot.decisions.is_some();
        let logged = decided.pass.as_ref().filter(|_| noted);
        let learnt = Learnt {
            traits: std::mem::take(&mut decided.traits),
            pass: logged.map(|pass| pass.digest(snapshot.decider.gate().digest_key())),
            proof: decided.proof,
            earned: ctx.earned.is_some(),
        };
        self.note_outcome(&mut decided, learnt, ctx);
        let action = match (&decided.decision.outcome, room) {
            (Outcome::Challenged(challenged, _), Some(room)) => {
                let req = session.req_header();
                return challenge::page(room, challenged, req, client.ip, ctx.front.id());
            }
            (outcome, _) => snapshot.render(outcome, ctx.record.traits().bot.as_ref()),
        };
        match action {
            Handling::Forward(_) if hygiene::is_asterisk(session.req_header()) => server_options(),
            Handling::Forward(_) if decided.spared.is_some() => robots::not_found(),
            Handling::Forward(_) => self.admit(snapshot, session, ctx, &decided, action).await,
            refusal => refusal,
        }
    }
}

/// The answer to `OPTIONS *`: 200, the methods allowed, no body.
fn server_options() -> Handling {
    let build = || -> pingora::Result<Box<ResponseHeader>> {
        let mut header = ResponseHeader::build(200, Some(2))?;
        header.insert_header(ALLOW, ALLOWED)?;
        header.insert_header(CONTENT_LENGTH, "0")?;
        Ok(Box::new(header))
    };
    match build() {
        Ok(header) => Handling::Answer(header, Bytes::new()),
        Err(e) => {
            log::error!("could not build the answer to OPTIONS *: {e}");
            super::render::problem(500, Bytes::new(), &[])
        }
    }
}
