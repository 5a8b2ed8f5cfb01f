//! A finished request's spans, as the OpenTelemetry SDK's exporters take them: the server
//! span with Floodgate's and HTTP's attributes, and its children for the store call and the
//! upstream.

use super::request::{Finished, SpanFacts, Timed};
use crate::telemetry::RequestDecision;
use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceState};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};
use std::borrow::Cow;

/// The spans of `finished`, under `scope`.
pub(super) fn spans(finished: Finished, scope: &InstrumentationScope) -> Vec<SpanData> {
    let mut spans = Vec::with_capacity(3);
    if let Some(store) = finished.store {
        let span = child(
            &finished,
            SpanId::INVALID,
            "floodgate.store",
            SpanKind::Internal,
            store,
        );
        spans.push(span);
    }
    if let Some((span_id, timed)) = finished.upstream {
        let mut span = child(&finished, span_id, "", SpanKind::Client, timed);
        span.name = Cow::Owned(finished.facts.method.clone());
        span.attributes = upstream_attributes(&finished.facts);
        spans.push(span);
    }
    spans.push(server(finished));
    spans
        .iter_mut()
        .for_each(|s| s.instrumentation_scope = scope.clone());
    spans
}

/// The request's own span.
fn server(finished: Finished) -> SpanData {
    let facts = &finished.facts;
    let name = match &facts.route {
        Some(route) => format!("{} {route}", facts.method),
        None => facts.method.clone(),
    };
    let status = match (facts.status, &facts.error) {
        (Some(500..), _) | (None, Some(_)) => {
            Status::error(facts.error.clone().unwrap_or_default())
        }
        _ => Status::Unset,
    };
    let parent = finished.parent;
    SpanData {
        span_context: context(&finished, finished.span_id),
        parent_span_id: parent.map_or(SpanId::INVALID, |p| p.span_id),
        parent_span_is_remote: parent.is_some(),
        span_kind: SpanKind::Server,
        name: Cow::Owned(name),
        start_time: finished.began_wall,
        end_time: finished.wall(finished.ended),
        attributes: server_attributes(facts),
        dropped_attributes_count: 0,
        events: SpanEvents::default(),
        links: SpanLinks::default(),
        status,
        instrumentation_scope: InstrumentationScope::default(),
    }
}

/// A child of the request's span (`span_id`: a new one when `INVALID`).
fn child(
    finished: &Finished,
    span_id: SpanId,
    name: &'static str,
    kind: SpanKind,
    timed: Timed,
) -> SpanData {
    let span_id = match span_id {
        SpanId::INVALID => derived_span_id(finished.span_id),
        given => given,
    };
    SpanData {
        span_context: context(finished, span_id),
        parent_span_id: finished.span_id,
        parent_span_is_remote: false,
        span_kind: kind,
        name: Cow::Borrowed(name),
        start_time: finished.wall(timed.began),
        end_time: finished.wall(timed.ended),
        attributes: Vec::new(),
        dropped_attributes_count: 0,
        events: SpanEvents::default(),
        links: SpanLinks::default(),
        status: Status::Unset,
        instrumentation_scope: InstrumentationScope::default(),
    }
}

/// A span id of the request's own child made from the request span's (unique within the
/// trace, with no random draw on the way).
fn derived_span_id(of: SpanId) -> SpanId {
    let n = u64::from_be_bytes(of.to_bytes()).rotate_left(17) ^ 0x5bd1_e995_5bd1_e995;
    SpanId::from_bytes(n.max(1).to_be_bytes())
}

fn context(finished: &Finished, span_id: SpanId) -> SpanContext {
    SpanContext::new(
        finished.trace_id,
        span_id,
        TraceFlags::SAMPLED,
        false,
        TraceState::NONE,
    )
}

/// The server span's attributes: Floodgate's, then HTTP's semantic conventions.
fn server_attributes(facts: &SpanFacts) -> Vec<KeyValue> {
    let mut kv = vec![
        KeyValue::new(
            "floodgate.decision",
            facts.decision.map_or("", RequestDecision::label),
        ),
        KeyValue::new("floodgate.ref", facts.reference.clone()),
        KeyValue::new("http.request.method", facts.method.clone()),
        KeyValue::new("url.path", facts.path.clone()),
        KeyValue::new("url.scheme", facts.scheme),
        KeyValue::new("network.protocol.version", facts.protocol_version),
    ];
    let text = |key: &'static str, value: Option<String>| value.map(|v| KeyValue::new(key, v));
    kv.extend(
        [
            text(
                "floodgate.policy",
                facts.policy.as_deref().map(str::to_owned),
            ),
            text(
                "floodgate.identity_source",
                facts.identity_source.as_deref().map(str::to_owned),
            ),
            facts
                .bot_category
                .map(|c| KeyValue::new("floodgate.bot.category", c)),
            facts.score.map(|s| KeyValue::new("floodgate.score", s)),
            text("http.route", facts.route.clone()),
            facts
                .status
                .map(|s| KeyValue::new("http.response.status_code", i64::from(s))),
            text(
                "server.address",
                facts.server.as_ref().map(|(host, _)| host.clone()),
            ),
            facts
                .server
                .as_ref()
                .and_then(|(_, port)| *port)
                .map(|port| KeyValue::new("server.port", i64::from(port))),
            text(
                "client.address",
                facts.client_address.map(|ip| ip.to_string()),
            ),
            text("user_agent.original", facts.user_agent.clone()),
            text("error.type", facts.error.clone()),
        ]
        .into_iter()
        .flatten(),
    );
    kv
}

/// The upstream span's attributes: the request as the backend got it.
fn upstream_attributes(facts: &SpanFacts) -> Vec<KeyValue> {
    let mut kv = vec![KeyValue::new("http.request.method", facts.method.clone())];
    if let Some(backend) = &facts.backend {
        kv.push(KeyValue::new("server.address", backend.clone()));
    }
    if let Some(status) = facts.status {
        kv.push(KeyValue::new(
            "http.response.status_code",
            i64::from(status),
        ));
    }
    kv
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_span_names_each_decision_by_its_access_log_word() {
        for &decision in RequestDecision::ALL {
            let facts = SpanFacts {
                decision: Some(decision),
                ..SpanFacts::default()
            };
            let attributes = server_attributes(&facts);
            let said = attributes
                .iter()
                .find(|kv| kv.key.as_str() == "floodgate.decision")
                .map(|kv| kv.value.to_string());
            assert_eq!(said.as_deref(), Some(decision.label()));
        }
    }
}
