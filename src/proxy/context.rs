//! What the proxy keeps of one request between pingora's phases.

use super::upstream::Attempts;
use super::{challenge, drain, explained, front, Snapshot};
use crate::gate::reply::RateLimitHeaders;
use crate::gate::{Aftercare, OutcomeKind, Ticket};
use crate::identity::{BotClaim, H2Fp, H2fpDeclined, Identity, Ja4, ProofState, RobotsFact, Score};
use crate::overload::Permit;
use crate::proof::Lesson;
use std::sync::Arc;
use std::time::Instant;

/// Per-request state carried between pingora's phases.
pub struct RequestCtx {
    /// The snapshot this request runs under, start to finish, whatever reloads happen: whom
    /// to trust and what to decide come from the same config.
    pub(super) snapshot: Arc<Snapshot>,
    pub(super) ratelimit: Option<RateLimitHeaders>,
    pub(super) outcome: Option<OutcomeKind>,
    /// What a solution to the challenge came to (the solution endpoint's requests, which the
    /// gate does not decide), for the log line.
    pub(super) solved: Option<challenge::Solved>,
    /// Why the blocklist refused the request (CrowdSec's scenario), for the log line.
    pub(super) blocked_by: Option<Arc<str>>,
    pub(super) ticket: Option<Ticket>,
    /// Settlements and slots the response phases owe the request's policies.
    pub(super) aftercare: Aftercare,
    pub(super) upstream: Attempts,
    /// When the head was in, for the access log (read only when it is on).
    pub(super) started: Option<Instant>,
    pub(super) upstream_started: Option<Instant>,
    /// The request id, the way in, gRPC or not.
    pub(super) front: front::Front,
    /// The crawler the request claimed, for the log line and a deny's body.
    pub(super) bot: Option<BotClaim>,
    /// The `deny`, `allow` or `challenge` policy that decided the request, for the log line.
    pub(super) ruled_by: Option<Arc<str>>,
    /// The digest of the pass the request carried (what the control API names it by), for
    /// the log line.
    pub(super) pass: Option<Identity>,
    /// The request's JA4, for the log line and the backend (`upstream.ja4_header`).
    pub(super) ja4: Option<Ja4>,
    /// The request's HTTP/2 fingerprint, for the log line and the backend
    /// (`upstream.h2fp_header`).
    pub(super) h2fp: Option<H2Fp>,
    /// Why the connection's fingerprint was not read, when it was asked for and declined, for
    /// the log line.
    pub(super) h2fp_declined: Option<H2fpDeclined>,
    /// The request's bot score, when it was worked out, for the log line and the backend.
    pub(super) score: Option<Score>,
    /// The request's slot at its pool's backends (`[overload]`), given back when it ends.
    pub(super) slot: Option<Permit>,
    /// A second handle on the connection to the backend while the request holds slots and
    /// the backend's answer has not ended (`drain.rs`).
    pub(super) backend_line: Option<drain::Line>,
    /// The request's trace, when requests are traced (`traced.rs`).
    pub(super) trace: Option<crate::trace::RequestTrace>,
    /// What is known of the decision so far, to be kept when the request ends (`[decisions]`).
    pub(super) explained: explained::Draft,
    /// What was known of the verified credentials the request carried, for the log line and
    /// the decision's record.
    pub(super) proof: Option<ProofState>,
    /// What the backend's answer may teach of the request's credential (`[identity.verify]`).
    pub(super) lesson: Option<Lesson>,
    /// What the site's robots.txt says of the crawler's request (`[robots]`), for the log line
    /// and the decision's record.
    pub(super) robots: Option<RobotsFact>,
    /// What Floodgate answered by itself, outside the gate (`/robots.txt`).
    pub(super) own_answer: Option<super::robots::OwnAnswer>,
    /// The pass cookie a Privacy Pass token earned the request (`Set-Cookie` on its answer).
    pub(super) earned: Option<String>,
}

impl RequestCtx {
    /// A request's state, run under `snapshot` from start to finish.
    pub(super) fn new(snapshot: Arc<Snapshot>) -> Self {
        Self {
            snapshot,
            ratelimit: None,
            outcome: None,
            solved: None,
            blocked_by: None,
            ticket: None,
            aftercare: Aftercare::default(),
            upstream: Attempts::default(),
            started: None,
            upstream_started: None,
            front: front::Front::default(),
            bot: None,
            ruled_by: None,
            pass: None,
            ja4: None,
            h2fp: None,
            h2fp_declined: None,
            score: None,
            slot: None,
            backend_line: None,
            trace: None,
            explained: explained::Draft::default(),
            proof: None,
            lesson: None,
            robots: None,
            own_answer: None,
            earned: None,
        }
    }
}
