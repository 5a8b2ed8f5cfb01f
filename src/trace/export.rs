//! The tracer: hands each request its trace, and queues finished ones (bounded, never
//! waiting) for a thread of its own that builds their spans and posts them in batches with
//! the OTLP/HTTP exporter. Spans that do not fit the queue, or whose post fails (collector
//! down, slow past the timeout, answering 500), are dropped and counted; the failure is
//! logged at most once a minute.

use super::client::{Blocking, POST_TIMEOUT};
use super::context::Parent;
use super::request::{Finished, RequestTrace};
use super::settings::TraceSettings;
use super::span::spans;
use super::warn::Seldom;
use http::{HeaderMap, HeaderName, HeaderValue};
use opentelemetry::InstrumentationScope;
use opentelemetry_otlp::{Protocol, RetryPolicy, SpanExporter, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::{RandomIdGenerator, SpanExporter as _};
use opentelemetry_sdk::Resource;
use prometheus::IntCounter;
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::time::{Duration, Instant, SystemTime};

/// Finished requests waiting for the export thread, at most.
const QUEUE: usize = 2048;
/// Requests whose spans are posted together, at most.
const BATCH: usize = 512;
/// How long a batch waits for more after its first request.
const LINGER: Duration = Duration::from_millis(500);

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
    queue: SyncSender<Finished>,
    ids: RandomIdGenerator,
    dropped: IntCounter,
}

impl Tracer {
    /// A tracer posting to `settings.url`, counting in `counters`; its export thread starts
    /// now (the exporter and its client are made there: a blocking client may not be made or
    /// dropped on a runtime's worker).
    pub fn start(settings: TraceSettings, counters: TraceCounters) -> std::io::Result<Self> {
        let (queue, waiting) = sync_channel(QUEUE);
        let (url, service) = (settings.url.clone(), settings.service_name.clone());
        let dropped = counters.dropped.clone();
        std::thread::Builder::new()
            .name("floodgate-traces".into())
            .spawn(move || match exporter(&url, &service) {
                Ok(exporter) => export_all(&waiting, &exporter, &counters),
                Err(e) => log::error!("traces: cannot export to {url}: {e}; spans are dropped"),
            })?;
        Ok(Self {
            settings,
            queue,
            ids: RandomIdGenerator::default(),
            dropped,
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

    /// Queues `finished` for export, or drops it (counted) when the queue is full.
    pub fn send(&self, finished: Finished) {
        if let Err(e) = self.queue.try_send(finished) {
            let finished = match e {
                std::sync::mpsc::TrySendError::Full(f) => f,
                std::sync::mpsc::TrySendError::Disconnected(f) => f,
            };
            self.dropped.inc_by(finished.span_count());
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

/// Posts batches from `waiting` until every sender is gone.
fn export_all(waiting: &Receiver<Finished>, exporter: &SpanExporter, counters: &TraceCounters) {
    let scope = InstrumentationScope::builder("floodgate")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build();
    let mut seldom = Seldom::default();
    while let Some(batch) = next_batch(waiting) {
        let spans: Vec<_> = batch.into_iter().flat_map(|f| spans(f, &scope)).collect();
        let count = spans.len() as u64;
        match futures::executor::block_on(exporter.export(spans)) {
            Ok(()) => counters.exported.inc_by(count),
            Err(e) => {
                counters.dropped.inc_by(count);
                if seldom.may_say(Instant::now()) {
                    log::warn!("traces: {count} spans dropped, the collector did not take them: {e} (said at most once a minute; floodgate_trace_spans_dropped_total counts them)");
                }
            }
        }
    }
}

/// The next batch: the first request waiting, and those that follow within [`LINGER`], up
/// to [`BATCH`]; `None` once every sender is gone and nothing waits.
fn next_batch(waiting: &Receiver<Finished>) -> Option<Vec<Finished>> {
    let first = waiting.recv().ok()?;
    let deadline = Instant::now() + LINGER;
    let mut batch = vec![first];
    while batch.len() < BATCH {
        let left = deadline.saturating_duration_since(Instant::now());
        match waiting.recv_timeout(left) {
            Ok(finished) => batch.push(finished),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
        }
    }
    Some(batch)
}
