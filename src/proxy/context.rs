//! What the proxy keeps of one request between pingora's phases.

use super::record::Record;
use super::upstream::Attempts;
use super::{drain, front, Snapshot};
use crate::gate::reply::RateLimitHeaders;
use crate::gate::Aftercare;
use crate::overload::Permit;
use crate::proof::Lesson;
use std::sync::Arc;
use std::time::Instant;

/// Per-request state carried between pingora's phases, on the heap: pingora moves its context
/// by value into each request's future, which lays it out more than once and copies that whole
/// future into a box for every request, so the context it holds is one pointer.
pub struct RequestCtx(Box<RequestState>);

impl std::ops::Deref for RequestCtx {
    type Target = RequestState;

    fn deref(&self) -> &RequestState {
        &self.0
    }
}

impl std::ops::DerefMut for RequestCtx {
    fn deref_mut(&mut self) -> &mut RequestState {
        &mut self.0
    }
}

/// What a request keeps between pingora's phases.
pub struct RequestState {
    /// The snapshot this request runs under, start to finish, whatever reloads happen: whom
    /// to trust and what to decide come from the same config.
    pub(super) snapshot: Arc<Snapshot>,
    pub(super) ratelimit: Option<RateLimitHeaders>,
    /// The one record of the request's decision: what the gate (or Floodgate by itself)
    /// made of it and what was learnt of its sender, for the access log, the decision
    /// record, the trace, the offenders and the metrics.
    pub(super) record: Record,
    /// Settlements and slots the response phases owe the request's policies.
    pub(super) aftercare: Aftercare,
    pub(super) upstream: Attempts,
    /// When the head was in, for the access log (read only when it is on).
    pub(super) started: Option<Instant>,
    pub(super) upstream_started: Option<Instant>,
    /// The request id, the way in, gRPC or not.
    pub(super) front: front::Front,
    /// The request's slot at its pool's backends (`[overload]`), given back when it ends.
    pub(super) slot: Option<Permit>,
    /// A second handle on the connection to the backend while the request holds slots and
    /// the backend's answer has not ended (`drain.rs`).
    pub(super) backend_line: Option<drain::Line>,
    /// The request's trace, when requests are traced (`traced.rs`).
    pub(super) trace: Option<crate::trace::RequestTrace>,
    /// What the backend's answer may teach of the request's credential (`[identity.verify]`).
    pub(super) lesson: Option<Lesson>,
    /// The pass cookie a Privacy Pass token earned the request (`Set-Cookie` on its answer).
    pub(super) earned: Option<String>,
}

impl RequestCtx {
    /// A request's state, run under `snapshot` from start to finish.
    pub(super) fn new(snapshot: Arc<Snapshot>) -> Self {
        Self(Box::new(RequestState {
            snapshot,
            ratelimit: None,
            record: Record::default(),
            aftercare: Aftercare::default(),
            upstream: Attempts::default(),
            started: None,
            upstream_started: None,
            front: front::Front::default(),
            slot: None,
            backend_line: None,
            trace: None,
            lesson: None,
            earned: None,
        }))
    }
}
