//! OpenTelemetry traces (`[telemetry] otlp_endpoint`): a server span per request, with child
//! spans for the store call and the upstream, built after the fact from instants the proxy
//! noted, and exported over OTLP/HTTP (protobuf) by a thread of their own from a bounded
//! queue: a full queue or a failing collector drops spans (counted), never a request's time.
//! W3C `traceparent` is honoured from trusted proxies and sent to the backend.

mod client;
mod context;
mod export;
mod request;
mod sampling;
mod settings;
mod span;

pub use context::{traceparent, Parent};
pub use export::{TraceCounters, Tracer, TRACEPARENT, TRACESTATE};
pub use request::{Finished, RequestTrace, SpanFacts, Timed};
pub use sampling::Sampling;
pub use settings::{traces_url, EndpointError, TraceSettings};
