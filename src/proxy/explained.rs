//! What the proxy keeps of each request's decision so it can be explained later
//! (`GET /v1/decisions/{ref}`): the gate's outcome noted as it is rendered (policies, caller,
//! bucket), overload's admission, and, once the request has ended, the record built from them
//! and what the access log reads (bot claim, JA4, pass, final decision, status) and kept
//! under the request id: Floodgate's own, or a trusted proxy's (a client's own never is: see
//! `request_id`). Nothing is kept for an id outside the reference grammar: it could never be
//! looked up.

use super::{access_log, RequestCtx, Snapshot};
use crate::clock::wall_now_ms;
use crate::explain::{kept_path, Bucket, Caller, Decisions, Overloaded, Record, Reference, Step};
use crate::gate::{Decided, Outcome, Standing, Trail};
use crate::identity::{Identity, SourceSpec};
use crate::policy::Priority;
use pingora::proxy::Session;
use smallvec::SmallVec;
use std::sync::Arc;

/// The parts of a record known before the request ends.
#[derive(Debug, Default)]
pub(super) struct Draft {
    steps: SmallVec<[Step; 1]>,
    caller: Option<Caller>,
    bucket: Option<Bucket>,
    overload: Option<Overloaded>,
}

impl Draft {
    /// Notes the policies whose buckets the request met, in the order the gate checked them.
    pub(super) fn checked(&mut self, trail: &Trail<'_>) {
        self.steps = trail
            .checked()
            .iter()
            .map(|c| Step {
                policy: c.policy.clone(),
                outcome: c.outcome.label(),
                remaining: c.remaining,
            })
            .collect();
    }

    /// Notes what the gate's `outcome` says: the deciding policy and what it said (unless the
    /// trail has it), the caller and the bucket.
    pub(super) fn note(&mut self, outcome: &Outcome<'_>) {
        match outcome {
            Outcome::Allowed(decided, _) => self.decided(decided, "allowed"),
            Outcome::Throttled(decided) => self.decided(decided, "throttled"),
            Outcome::Busy(busy) => {
                self.step(busy.policy, "busy");
                self.caller = Some(caller(busy.source, busy.identity));
            }
            Outcome::Unpayable(unpayable) => {
                self.step(unpayable.policy, "unpayable");
                self.caller = Some(caller(unpayable.source, unpayable.identity));
            }
            Outcome::Denied(policy) => self.step(policy, "denied"),
            Outcome::AllowedByRule(policy) => self.step(policy, "allowed_by_rule"),
            Outcome::Challenged(challenged, _) => self.step(challenged.policy, "challenged"),
            _ => {}
        }
    }

    /// Notes what overload protection made of a request of `priority`: `admitted`,
    /// `challenged` or `shed`.
    pub(super) fn admission(&mut self, priority: Priority, admission: &'static str) {
        self.overload = Some(Overloaded {
            priority,
            admission,
        });
    }

    fn decided(&mut self, decided: &Decided<'_>, said: &'static str) {
        self.step(decided.standing.policy, said);
        self.caller = Some(caller(decided.source, decided.identity));
        self.bucket = Some(bucket(&decided.standing));
    }

    /// Adds `policy`'s `outcome`, unless the trail noted it already.
    fn step(&mut self, policy: &Arc<str>, outcome: &'static str) {
        let noted = |s: &Step| *s.policy == **policy && s.outcome == outcome;
        if !self.steps.iter().any(noted) {
            self.steps.push(Step {
                policy: policy.clone(),
                outcome,
                remaining: None,
            });
        }
    }
}

/// The caller named by `source` (`None`: anonymous) as `digest`.
fn caller(source: Option<&SourceSpec>, digest: Identity) -> Caller {
    Caller {
        source: source.map(SourceSpec::shared_tag),
        digest,
    }
}

/// The bucket as `standing` describes it: what the request took, if it was allowed.
fn bucket(standing: &Standing<'_>) -> Bucket {
    let after = standing.assessment.remaining();
    let allowed = standing.assessment.is_allowed();
    Bucket {
        capacity: standing.quota.capacity,
        cost: standing.cost,
        before: if allowed {
            after + standing.cost as f64
        } else {
            after
        },
        after,
        retry_after_s: (!allowed).then(|| standing.assessment.wait_us().div_ceil(1_000_000)),
    }
}

/// Keeps the decision of the request in `session`, now ended with status `written`, in
/// `decisions`.
pub(super) fn keep(
    decisions: &Decisions,
    snapshot: &Snapshot,
    session: &Session,
    ctx: &mut RequestCtx,
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
    let draft = std::mem::take(&mut ctx.explained);
    let req = session.req_header();
    let route = ctx
        .upstream
        .pool()
        .and_then(|i| snapshot.upstream.pools().get(i))
        .map(|pool| pool.shared_name().clone());
    let now_ms = wall_now_ms();
    let record = Record {
        reference,
        at_ms: now_ms,
        method: req.method.clone(),
        path: kept_path(req.uri.path()),
        route,
        steps: draft.steps,
        caller: draft.caller,
        bucket: draft.bucket,
        bot: ctx.bot.clone().map(Box::new),
        ja4: ctx.ja4,
        h2fp: ctx.h2fp.clone(),
        score: ctx.score,
        pass: ctx.pass,
        proof: ctx.proof,
        privacy_pass: ctx.earned.is_some(),
        robots: ctx.robots.clone().map(Box::new),
        overload: draft.overload,
        blocked_by: ctx.blocked_by.clone(),
        decision: access_log::decision(ctx),
        outcome: ctx.outcome,
        status: written.unwrap_or(0),
    };
    decisions.keep(record, now_ms);
}
