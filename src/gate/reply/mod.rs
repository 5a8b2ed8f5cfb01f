//! Outcomes as replies, the same at every front door: forward with the RateLimit headers'
//! values, or refuse with a status, headers (`Retry-After`, `RateLimit-Policy`, `RateLimit`,
//! `WWW-Authenticate`) and an RFC 9457 problem body. The proxy writes a refusal as its
//! response, the decision endpoint as its answer; neither builds one of its own.

mod headers;
mod problem;
mod refusals;
#[cfg(test)]
mod tests;

pub use headers::{
    exhausted_text, policy_text, ratelimit_text, retry_after, standing_texts, PolicyHeaders,
    RateLimitHeaders, StandingTexts,
};
pub use problem::{echo, problem_body, with_ref, MAX_ECHO, PROBLEM_JSON};

use super::Outcome;
use crate::clock::Clock;
use crate::identity::BotClaim;
use crate::limiter::Undecided;
use crate::telemetry::AccessList;
use bytes::Bytes;
use headers::header_value;
use http::{HeaderName, HeaderValue};
use smallvec::SmallVec;

/// What a front door does with a request.
pub enum Reply {
    /// Forward it (allow it), adding these `RateLimit-Policy` and `RateLimit` values.
    Forward(Option<RateLimitHeaders>),
    /// Refuse it with this problem response.
    Refuse(Refusal),
}

/// A refusal: its status, the headers it carries besides `Content-Type` (always
/// [`PROBLEM_JSON`]), and its problem body.
pub struct Refusal {
    /// The status.
    pub status: u16,
    /// `Retry-After`, the RateLimit headers, `WWW-Authenticate`, as the refusal has them.
    pub headers: SmallVec<[(HeaderName, HeaderValue); 3]>,
    /// The problem+json body.
    pub body: Bytes,
}

impl Refusal {
    /// A refusal of `status` with `body` and `headers`.
    fn new(status: u16, body: Bytes, headers: &[(HeaderName, HeaderValue)]) -> Self {
        Self {
            status,
            headers: headers.iter().cloned().collect(),
            body,
        }
    }
}

/// What a front door does for `outcome`: throttled requests get `throttle_status`, a deny names
/// the crawler `bot` the request claimed; the time left on a ban or a quota is by `clock`.
pub fn reply(
    outcome: &Outcome<'_>,
    policies: &PolicyHeaders,
    throttle_status: u16,
    bot: Option<&BotClaim>,
    clock: &Clock,
) -> Reply {
    use refusals::*;
    let refusal = match outcome {
        Outcome::Unlimited(_)
        | Outcome::Listed(AccessList::Allow)
        | Outcome::AllowedByRule(_)
        | Outcome::Undecided(Undecided::Pass) => return Reply::Forward(None),
        Outcome::Allowed(decided, _) => {
            return Reply::Forward(Some(RateLimitHeaders {
                policy: policies.of(&decided.standing),
                ratelimit: header_value(ratelimit_text(&decided.standing)),
            }))
        }
        Outcome::Listed(AccessList::Deny) => refusal(403, "This client is not allowed."),
        Outcome::Banned(ban) => banned(ban, clock),
        Outcome::Trapped(trapped) => trapped_refusal(trapped, clock),
        Outcome::Denied(policy) => denied(policy, bot),
        Outcome::Blocked(block) => blocked(block, throttle_status, clock),
        Outcome::InvalidToken => refusal(401, "The bearer token is not valid."),
        Outcome::AmbiguousCredential(source) => ambiguous_credential(source),
        Outcome::KeyRefused(source) => key_refused(source),
        Outcome::Throttled(decided) => {
            throttled(throttle_status, &decided.standing, policies, clock)
        }
        Outcome::Busy(busy) => concurrency_refusal(throttle_status, busy),
        Outcome::Unpayable(unpayable) => unpayable_refusal(throttle_status, unpayable, policies),
        Outcome::BadCost(bad) => bad_cost(bad),
        Outcome::Undecided(Undecided::Refuse) => store_unavailable(),
        // The challenge room renders its page (it needs a nonce); this is only reached when
        // no room is there to do it, and fails closed.
        Outcome::Challenged(challenged, _) => denied(challenged.policy, bot),
    };
    Reply::Refuse(refusal)
}
