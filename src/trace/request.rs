//! One request's trace while it runs: its ids, its parent, and the instants of its spans,
//! noted by the proxy's phases; built into spans only once it has ended (and only if kept).

use super::context::{traceparent, Parent};
use super::sampling::Sampling;
use crate::telemetry::RequestDecision;
use http::HeaderValue;
use opentelemetry::trace::{SpanId, TraceId};
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

/// When a piece of work began and ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timed {
    /// When it began.
    pub began: Instant,
    /// When it ended.
    pub ended: Instant,
}

/// The upstream span: named in the backend's `traceparent` before it is built.
#[derive(Debug, Clone, Copy)]
struct Upstream {
    span_id: SpanId,
    began: Instant,
    ended: Option<Instant>,
}

/// A request's trace under way.
#[derive(Debug)]
pub struct RequestTrace {
    trace_id: TraceId,
    span_id: SpanId,
    parent: Option<Parent>,
    /// The trusted caller's `tracestate`, passed to the backend with the trace.
    tracestate: Option<HeaderValue>,
    sampling: Sampling,
    began_wall: SystemTime,
    began: Instant,
    store: Option<Timed>,
    upstream: Option<Upstream>,
}

/// What the server span says of the request (`floodgate.*` and HTTP's attributes).
#[derive(Debug, Clone, Default)]
pub struct SpanFacts {
    /// `floodgate.decision`: the access log's decision (`None`: answered before any).
    pub decision: Option<RequestDecision>,
    /// `floodgate.policy`: the deciding policy.
    pub policy: Option<Arc<str>>,
    /// `floodgate.identity_source`: the source that named the caller (`header:x-api-key`).
    pub identity_source: Option<Arc<str>>,
    /// `floodgate.bot.category`: the category of the crawler the request claimed.
    pub bot_category: Option<&'static str>,
    /// `floodgate.score`: the request's score, where one was made.
    pub score: Option<f64>,
    /// `floodgate.ref`: the request id.
    pub reference: String,
    /// `http.request.method`.
    pub method: String,
    /// `url.path`.
    pub path: String,
    /// `url.scheme`.
    pub scheme: &'static str,
    /// `http.route`: the `[[route]]` that matched, when one did.
    pub route: Option<String>,
    /// `http.response.status_code`: what the client was answered.
    pub status: Option<u16>,
    /// `server.address` and `server.port`: the host (and port) the client asked for.
    pub server: Option<(String, Option<u16>)>,
    /// `client.address`: the client (behind trusted proxies).
    pub client_address: Option<IpAddr>,
    /// `network.protocol.version`: `1.0`, `1.1`, `2`.
    pub protocol_version: &'static str,
    /// `user_agent.original`.
    pub user_agent: Option<String>,
    /// `error.type`: why the request failed, when it did.
    pub error: Option<String>,
    /// The upstream span's `server.address`: the backend.
    pub backend: Option<String>,
}

/// A request's trace once it has ended: what the export thread builds spans from.
#[derive(Debug)]
pub struct Finished {
    pub(super) trace_id: TraceId,
    pub(super) span_id: SpanId,
    pub(super) parent: Option<Parent>,
    pub(super) began_wall: SystemTime,
    pub(super) began: Instant,
    pub(super) ended: Instant,
    pub(super) store: Option<Timed>,
    pub(super) upstream: Option<(SpanId, Timed)>,
    pub(super) facts: SpanFacts,
}

impl RequestTrace {
    /// The trace of a request that began at `began` (`began_wall` on the wall clock), under
    /// `parent` (a trusted caller's, with its `tracestate`) or starting a trace of its own.
    pub fn begin(
        ids: &RandomIdGenerator,
        sampling: Sampling,
        parent: Option<(Parent, Option<HeaderValue>)>,
        began_wall: SystemTime,
        began: Instant,
    ) -> Self {
        let (parent, tracestate) = match parent {
            Some((parent, state)) => (Some(parent), state),
            None => (None, None),
        };
        Self {
            trace_id: parent.map_or_else(|| ids.new_trace_id(), |p| p.trace_id),
            span_id: ids.new_span_id(),
            parent,
            tracestate,
            sampling,
            began_wall,
            began,
            store: None,
            upstream: None,
        }
    }

    /// The trace's id.
    pub fn trace_id(&self) -> TraceId {
        self.trace_id
    }

    /// Whether the request's spans are kept: a trusted caller's sampled parent is followed;
    /// otherwise the ratio of refusals or of allowed requests decides, by the trace id.
    pub fn sampled(&self, refused: bool) -> bool {
        let ratio = match refused {
            true => self.sampling.refused,
            false => self.sampling.allowed,
        };
        self.parent.is_some_and(|p| p.sampled) || Sampling::keeps(ratio, self.trace_id)
    }

    /// Notes when the gate's store call began and ended.
    pub fn store_call(&mut self, timed: Option<Timed>) {
        self.store = timed;
    }

    /// The upstream span begins at `now` (the first attempt's): the `traceparent` naming it,
    /// sampled as an allowed request, and the caller's `tracestate`, for the backend.
    pub fn to_upstream(
        &mut self,
        ids: &RandomIdGenerator,
        now: Instant,
    ) -> (HeaderValue, Option<HeaderValue>) {
        let upstream = *self.upstream.get_or_insert_with(|| Upstream {
            span_id: ids.new_span_id(),
            began: now,
            ended: None,
        });
        let parent = traceparent(self.trace_id, upstream.span_id, self.sampled(false));
        (parent, self.tracestate.clone())
    }

    /// The backend's answer ended at `now`.
    pub fn upstream_ended(&mut self, now: Instant) {
        if let Some(upstream) = self.upstream.as_mut() {
            upstream.ended.get_or_insert(now);
        }
    }

    /// The trace of the request that ended at `ended`, as `facts` describe it.
    pub fn finish(self, facts: SpanFacts, ended: Instant) -> Finished {
        let upstream = self.upstream.map(|u| {
            let timed = Timed {
                began: u.began,
                ended: u.ended.unwrap_or(ended),
            };
            (u.span_id, timed)
        });
        Finished {
            trace_id: self.trace_id,
            span_id: self.span_id,
            parent: self.parent,
            began_wall: self.began_wall,
            began: self.began,
            ended,
            store: self.store,
            upstream,
            facts,
        }
    }
}

impl Finished {
    /// How many spans it makes: the server's, the store call's, the upstream's.
    pub(super) fn span_count(&self) -> u64 {
        1 + u64::from(self.store.is_some()) + u64::from(self.upstream.is_some())
    }

    /// `at` on the wall clock.
    pub(super) fn wall(&self, at: Instant) -> SystemTime {
        self.began_wall + at.saturating_duration_since(self.began)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_trusted_parent_names_the_trace_and_the_backend_gets_the_upstream_span() {
        let ids = RandomIdGenerator::default();
        let parent = Parent::parse(PARENT.as_bytes()).unwrap();
        let state = HeaderValue::from_static("congo=t61rcWkgMzE");
        let never = Sampling {
            allowed: 0.0,
            refused: 0.0,
        };
        let now = Instant::now();
        let mut trace = RequestTrace::begin(
            &ids,
            never,
            Some((parent, Some(state.clone()))),
            SystemTime::UNIX_EPOCH,
            now,
        );
        assert_eq!(trace.trace_id(), parent.trace_id);
        assert!(trace.sampled(false), "a sampled parent is followed");
        let (sent, sent_state) = trace.to_upstream(&ids, now + Duration::from_millis(1));
        let sent = Parent::parse(sent.as_bytes()).unwrap();
        assert_eq!(sent.trace_id, parent.trace_id);
        assert_eq!(sent_state, Some(state));
        trace.upstream_ended(now + Duration::from_millis(5));
        let finished = trace.finish(SpanFacts::default(), now + Duration::from_millis(6));
        let (span_id, timed) = finished.upstream.unwrap();
        assert_eq!(span_id, sent.span_id);
        assert_ne!(span_id, finished.span_id);
        assert_eq!(timed.ended - timed.began, Duration::from_millis(4));
        assert_eq!(
            finished.wall(now + Duration::from_secs(2)),
            SystemTime::UNIX_EPOCH + Duration::from_secs(2)
        );
        assert_eq!(finished.span_count(), 2);
    }

    #[test]
    fn without_a_parent_a_new_trace_is_sampled_by_the_ratio_of_its_kind() {
        let ids = RandomIdGenerator::default();
        let refusals_only = Sampling {
            allowed: 0.0,
            refused: 1.0,
        };
        let trace = RequestTrace::begin(
            &ids,
            refusals_only,
            None,
            SystemTime::UNIX_EPOCH,
            Instant::now(),
        );
        assert!(trace.sampled(true));
        assert!(!trace.sampled(false));
        let other = RequestTrace::begin(
            &ids,
            refusals_only,
            None,
            SystemTime::UNIX_EPOCH,
            Instant::now(),
        );
        assert_ne!(trace.trace_id(), other.trace_id());
    }
}
