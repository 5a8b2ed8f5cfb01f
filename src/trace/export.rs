//! The tracer: hands each request its trace, and queues finished ones (the bounded
//! [`Writer`], never waiting) for a thread of its own that builds their spans and posts them in
//! batches with the OTLP/HTTP exporter. Spans that do not fit the queue, or whose post fails
//! (collector down, slow past the timeout, answering 500), are dropped and counted; the loss is
//! logged at most once a minute.

use super::client::{Blocking, POST_TIMEOUT};
use super::context::Parent;
use super::request::{Finished, RequestTrace};
use super::settings::TraceSettings;
use super::span::spans;
use crate::clock::Clock;
use crate::telemetry::writer::{Batch, Bounds, Cause, Report, Writer};
use http::{HeaderMap, HeaderName, HeaderValue};
use opentelemetry::InstrumentationScope;
use opentelemetry_otlp::{Protocol, RetryPolicy, SpanExporter, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::{RandomIdGenerator, SpanExporter as _};
use opentelemetry_sdk::Resource;
use prometheus::IntCounter;
use std::time::{Duration, Instant, SystemTime};

/// Finished requests waiting for the export thread, at most; requests whose spans are posted
/// together, at most; how long a batch waits for more after its first request.
const BOUNDS: Bounds = Bounds {
    queue: 2048,
    batch: 512,
    linger: Duration::from_millis(500),
};

/// W3C Trace Context's parent header.
pub const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");
/// W3C Trace Context's vendor header, passed along with the parent.
pub const TRACESTATE: HeaderName = HeaderName::from_static("tracestate");

/// The series the tracer feeds.
#[derive(Debug, Clone)]
pub struct TraceCounters {
    /// `floodgate_trace_spans_dropped_total`.
    pub dropped: IntCounter,
    /// `floodgate_trace_spans_exported_total`.
    pub exported: IntCounter,
}

/// Traces requests under one `[telemetry]`; a reload with other settings makes another
/// (this one's thread posts what is queued and ends once the last request holding it ends).
#[derive(Debug)]
pub struct Tracer {
    settings: TraceSettings,
    queue: Writer<Finished>,
    ids: RandomIdGenerator,
}

impl Tracer {
    /// A tracer posting to `settings.url`, counting in `counters`; its export thread starts
    /// now (the exporter and its client are made there: a blocking client may not be made or
    /// dropped on a runtime's worker).
    pub fn start(settings: TraceSettings, counters: TraceCounters) -> std::io::Result<Self> {
        let report = Report {
            name: "traces",
            unit: "spans",
            when_full: "the export thread is behind",
            metric: Some(counters.dropped),
        };
        let (queue, batches) = Writer::new(report, BOUNDS, Clock::System);
        let (url, service) = (settings.url.clone(), settings.service_name.clone());
        let exported = counters.exported;
        batches.drain_on_thread("floodgate-traces", move || {
            let mut export = Export::new(&url, &service, exported);
            move |batch: &mut Batch<'_, Finished>| export.post(batch)
        })?;
        Ok(Self {
            settings,
            queue: queue.weighing(Finished::span_count),
            ids: RandomIdGenerator::default(),
        })
    }

    /// Its settings.
    pub fn settings(&self) -> &TraceSettings {
        &self.settings
    }

    /// The trace of a request with `headers`, that began at `began` (`began_wall`): under
    /// the `traceparent` of a `trusted` caller, a trace of its own otherwise.
    pub fn begin(
        &self,
        headers: &HeaderMap,
        trusted: bool,
        began_wall: SystemTime,
        began: Instant,
    ) -> RequestTrace {
        let parent = trusted
            .then(|| headers.get(TRACEPARENT))
            .flatten()
            .and_then(|v| Parent::parse(v.as_bytes()))
            .map(|parent| (parent, headers.get(TRACESTATE).cloned()));
        RequestTrace::begin(&self.ids, self.settings.sampling, parent, began_wall, began)
    }

    /// The `traceparent` (naming the upstream span, which begins at `now`) and the
    /// `tracestate` (the trusted caller's, or none) for the backend.
    pub fn to_upstream(
        &self,
        trace: &mut RequestTrace,
        now: Instant,
    ) -> (HeaderValue, Option<HeaderValue>) {
        trace.to_upstream(&self.ids, now)
    }

    /// Queues `finished` for export, or drops it (its spans counted) when the queue is full.
    pub fn send(&self, finished: Finished) {
        self.queue.send(finished);
    }
}

/// The export thread's end: the exporter (none if it could not be made: every batch is then
/// lost) and what it counts exported.
struct Export {
    exporter: Result<SpanExporter, String>,
    scope: InstrumentationScope,
    exported: IntCounter,
}

impl Export {
    /// An exporter posting to `url` as `service` (made on the export thread: a blocking client
    /// may not be made or dropped on a runtime's worker).
    fn new(url: &str, service: &str, exported: IntCounter) -> Self {
        let exporter = exporter(url, service).map_err(|e| {
            log::error!("traces: cannot export to {url}: {e}; spans are dropped");
            format!("no exporter for {url}: {e}")
        });
        let scope = InstrumentationScope::builder("floodgate")
            .with_version(env!("CARGO_PKG_VERSION"))
            .build();
        Self {
            exporter,
            scope,
            exported,
        }
    }

    /// Builds the spans of `batch` and posts them; counts them exported or lost.
    fn post(&mut self, batch: &mut Batch<'_, Finished>) {
        let exporter = match &self.exporter {
            Ok(exporter) => exporter,
            Err(none) => {
                let count = batch.iter().map(Finished::span_count).sum();
                return batch.lost(count, Cause::Failed(none));
            }
        };
        let scope = &self.scope;
        let spans: Vec<_> = batch.drain(..).flat_map(|f| spans(f, scope)).collect();
        let count = spans.len() as u64;
        match futures::executor::block_on(exporter.export(spans)) {
            Ok(()) => self.exported.inc_by(count),
            Err(e) => {
                let why = format!("the collector did not take them: {e}");
                batch.lost(count, Cause::Failed(&why));
            }
        }
    }
}

/// The OTLP/HTTP protobuf exporter posting to `url` as `service`.
fn exporter(url: &str, service: &str) -> Result<SpanExporter, Box<dyn std::error::Error>> {
    let mut exporter = SpanExporter::builder()
        .with_http()
        .with_http_client(Blocking::new()?)
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(url)
        .with_timeout(POST_TIMEOUT)
        // One retry (after 100 ms) rides out a blip; a failing collector then costs at most
        // two posts a batch.
        .with_retry_policy(RetryPolicy::recommended().with_max_retries(1))
        .build()?;
    let resource = Resource::builder_empty()
        .with_service_name(service.to_owned())
        .build();
    exporter.set_resource(&resource);
    Ok(exporter)
}
