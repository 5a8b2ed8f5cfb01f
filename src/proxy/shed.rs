//! After the gate forwards a request, overload protection (`[overload]`) may still hold it
//! back: the request waits for a slot at its pool's backends, or gets the challenge page of
//! its `on_overload` policy, or a 503 naming its priority.

use super::decide::DecidedRequest;
use super::render::{problem, Handling};
use super::{challenge, pick, Floodgate, RequestState, Snapshot};
use crate::gate::reply::problem_body;
use crate::gate::Challenged;
use crate::overload::{Admission, Asking, Shed};
use http::header::RETRY_AFTER;
use http::HeaderValue;
use pingora::proxy::Session;

impl Floodgate {
    /// What becomes of `forward`, the gate's forward of the request in `session`, when its
    /// pool is watched: forward holding a slot, the challenge page, or 503.
    pub(super) async fn admit(
        &self,
        snapshot: &Snapshot,
        session: &Session,
        ctx: &mut RequestState,
        decided: &DecidedRequest<'_>,
        forward: Handling,
    ) -> Handling {
        let Some(pools) = &snapshot.overload else {
            return forward;
        };
        let asking = Asking {
            class: &decided.decision.class,
            page: decided.page,
            pass: decided.pass.as_ref(),
            verified_crawler: ctx
                .record
                .traits()
                .bot
                .as_ref()
                .is_some_and(|b| b.verified()),
        };
        let pool = pick::pool_of(snapshot, session);
        ctx.upstream.going_to(pool);
        let admission = pools.admit(pool, asking).await;
        let priority = decided.decision.class.priority;
        match admission {
            Admission::Admitted(permit) => {
                ctx.slot = Some(permit);
                ctx.record.admitted(priority);
                forward
            }
            Admission::Unwatched => forward,
            Admission::Challenge(policy, policy_id, challenge) => {
                let Some(room) = snapshot.challenges.as_deref() else {
                    let shed = Shed {
                        priority,
                        retry_after_s: 1,
                        reason: "the backend is overloaded",
                    };
                    ctx.record.shed(priority, true);
                    return shed_answer(&shed);
                };
                let challenged = Challenged {
                    policy: &policy,
                    policy_id,
                    challenge: &challenge,
                };
                let req = session.req_header();
                let client = ctx.front.client.ip;
                let page = challenge::page(room, &challenged, req, client, ctx.front.id());
                ctx.record.challenged_by_overload(priority, policy);
                page
            }
            Admission::Shed(shed) => {
                ctx.record.shed(priority, false);
                shed_answer(&shed)
            }
        }
    }
}

/// 503 with `Retry-After` and a problem body naming the request's priority (not a limit:
/// nothing of the caller's was used up).
fn shed_answer(shed: &Shed) -> Handling {
    let detail = format!(
        "The service is overloaded: {}. Requests of priority {} are shed; retry in {} s.",
        shed.reason, shed.priority, shed.retry_after_s
    );
    let body = problem_body(
        503,
        &detail,
        serde_json::json!({
            "priority": shed.priority.word(),
            "retry_after": shed.retry_after_s,
        }),
    );
    problem(
        503,
        body,
        &[(RETRY_AFTER, HeaderValue::from(shed.retry_after_s))],
    )
}
