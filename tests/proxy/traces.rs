//! OpenTelemetry traces (`[telemetry] otlp_endpoint`) end to end: spans reach a real OTLP/HTTP
//! receiver (decoding with the official protobuf messages) with Floodgate's and HTTP's
//! attributes and the trace id the backend saw in `traceparent`; a caller's `traceparent` is
//! honoured only from trusted proxies; a collector that is down, failing or slow costs
//! requests nothing (paired rounds against the same proxy tracing to a healthy collector), its
//! spans dropped and counted, its failure logged once.

use crate::common::load::{hammer, LoadReport};
use crate::common::otlp::OtlpReceiver;
use crate::common::{client_from, free_port, header, Proxy, Upstream};
use serde_json::Value;
use std::time::{Duration, Instant};

const PARENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn telemetry(endpoint: &str, extra: &str) -> String {
    format!("[telemetry]\notlp_endpoint = \"{endpoint}\"\n{extra}\n")
}

fn policy(capacity: u64) -> String {
    format!("[identity]\nsources = [\"ip\"]\n\n[[policy]]\nname = \"per-ip\"\ncapacity = {capacity}\nrate = \"1/h\"\n")
}

fn attr<'v>(span: &'v Value, key: &str) -> &'v Value {
    &span["attributes"][key]
}

/// The server span of the request whose id is `id`.
fn server_span(receiver: &OtlpReceiver, id: &str) -> Value {
    receiver.wait_for(|s| s["kind"] == 2 && attr(s, "floodgate.ref") == id)
}

/// (trace id, parent span id) of a `traceparent` value.
fn ids_of(traceparent: &str) -> (String, String) {
    let parts: Vec<&str> = traceparent.split('-').collect();
    assert_eq!(parts.len(), 4, "{traceparent}");
    (parts[1].to_owned(), parts[2].to_owned())
}

#[test]
fn spans_reach_the_collector_with_the_decision_and_the_backend_joins_the_trace() {
    let upstream = Upstream::start();
    let receiver = OtlpReceiver::start();
    let extra = format!(
        "{}{}",
        policy(1),
        telemetry(&receiver.endpoint, "service_name = \"edge-eu\"")
    );
    let proxy = Proxy::start(&[&upstream.addr], &extra);
    let allowed = proxy.get("/shop/cart?x=1", &[("user-agent", "trace-test/1.0")]);
    assert_eq!(allowed.status(), 200);
    let id = header(&allowed, "x-request-id");
    let sent = upstream.last_header("traceparent");
    assert_eq!(sent.len(), 1, "{sent:?}");
    let (trace_id, upstream_span_id) = ids_of(&sent[0]);
    assert!(sent[0].ends_with("-01"), "sampled: {}", sent[0]);

    let server = server_span(&receiver, &id);
    assert_eq!(server["path"], "/v1/traces");
    assert_eq!(server["service"], "edge-eu");
    assert_eq!(server["trace_id"], trace_id.as_str(), "the backend's trace");
    assert_eq!(server["parent_span_id"], "", "a trace of its own");
    assert_eq!(server["name"], "GET");
    for (key, value) in [
        ("floodgate.decision", "allowed"),
        ("floodgate.policy", "per-ip"),
        ("floodgate.identity_source", "ip"),
        ("http.request.method", "GET"),
        ("url.path", "/shop/cart"),
        ("url.scheme", "http"),
        ("client.address", "127.0.0.1"),
        ("server.address", "127.0.0.1"),
        ("network.protocol.version", "1.1"),
        ("user_agent.original", "trace-test/1.0"),
    ] {
        assert_eq!(attr(&server, key), value, "{key}: {server:#}");
    }
    assert_eq!(attr(&server, "http.response.status_code"), 200);
    assert_eq!(attr(&server, "server.port"), proxy.port);
    let server_id = server["span_id"].as_str().unwrap().to_owned();
    let upstream_span = receiver.wait_for(|s| s["span_id"] == upstream_span_id.as_str());
    assert_eq!(upstream_span["kind"], 3, "client: {upstream_span:#}");
    assert_eq!(upstream_span["parent_span_id"], server_id.as_str());
    assert_eq!(upstream_span["trace_id"], trace_id.as_str());
    let store =
        receiver.wait_for(|s| s["name"] == "floodgate.store" && s["trace_id"] == trace_id.as_str());
    assert_eq!(store["parent_span_id"], server_id.as_str());
    for child in [&upstream_span, &store] {
        let (start, end) = (
            child["start_ns"].as_u64().unwrap(),
            child["end_ns"].as_u64().unwrap(),
        );
        assert!(
            start >= server["start_ns"].as_u64().unwrap() && start <= end,
            "{child:#}"
        );
        assert!(
            end <= server["end_ns"].as_u64().unwrap(),
            "{child:#} inside {server:#}"
        );
    }

    // A refusal: traced too, with no upstream span.
    let refused = proxy.get("/shop/cart", &[]);
    assert_eq!(refused.status(), 429);
    let id = header(&refused, "x-request-id");
    let server = server_span(&receiver, &id);
    assert_eq!(attr(&server, "floodgate.decision"), "throttled");
    assert_eq!(attr(&server, "floodgate.policy"), "per-ip");
    assert_eq!(attr(&server, "http.response.status_code"), 429);
    let trace = server["trace_id"].clone();
    std::thread::sleep(Duration::from_millis(700));
    let kinds: Vec<Value> = receiver
        .spans()
        .into_iter()
        .filter(|s| s["trace_id"] == trace)
        .map(|s| s["kind"].clone())
        .collect();
    assert_eq!(kinds.len(), 2, "the server's and the store's: {kinds:?}");
    assert!(proxy.metric("floodgate_trace_spans_exported_total") >= 5.0);
    assert_eq!(proxy.metric("floodgate_trace_spans_dropped_total"), 0.0);
}

#[test]
fn a_traceparent_is_honoured_from_trusted_proxies_only() {
    let upstream = Upstream::start();
    let receiver = OtlpReceiver::start();
    let extra = format!(
        "[identity.ip]\ntrusted_proxies = [\"127.0.0.2/32\"]\n\n{}",
        telemetry(&receiver.endpoint, "")
    );
    let proxy = Proxy::start(&[&upstream.addr], &extra);
    let send = |from: &str| {
        let answer = client_from(from)
            .get(proxy.url("/"))
            .header("traceparent", PARENT)
            .header("tracestate", "congo=t61rcWkgMzE")
            .send()
            .expect("answer");
        assert_eq!(answer.status(), 200);
        header(&answer, "x-request-id")
    };

    let id = send("127.0.0.1");
    let sent = upstream.last_header("traceparent");
    let (trace_id, _) = ids_of(&sent[0]);
    assert_ne!(
        trace_id, PARENT_TRACE,
        "an untrusted caller's trace is not joined"
    );
    assert_eq!(upstream.last_header("tracestate"), Vec::<String>::new());
    let server = server_span(&receiver, &id);
    assert_eq!(server["trace_id"], trace_id.as_str());
    assert_eq!(server["parent_span_id"], "");

    let id = send("127.0.0.2");
    let sent = upstream.last_header("traceparent");
    let (trace_id, upstream_span_id) = ids_of(&sent[0]);
    assert_eq!(trace_id, PARENT_TRACE, "a trusted caller's trace is joined");
    assert_ne!(
        upstream_span_id, "00f067aa0ba902b7",
        "the backend's parent is our span"
    );
    assert_eq!(upstream.last_header("tracestate"), ["congo=t61rcWkgMzE"]);
    let server = server_span(&receiver, &id);
    assert_eq!(server["trace_id"], PARENT_TRACE);
    assert_eq!(server["parent_span_id"], "00f067aa0ba902b7");
}

#[test]
fn allowed_requests_are_sampled_by_their_ratio_and_refusals_by_theirs() {
    let upstream = Upstream::start();
    let receiver = OtlpReceiver::start();
    let extra = format!(
        "{}{}",
        policy(2),
        telemetry(&receiver.endpoint, "sample_ratio = 0")
    );
    let proxy = Proxy::start(&[&upstream.addr], &extra);
    let ids: Vec<(u16, String)> = (0..4)
        .map(|_| {
            let answer = proxy.get("/", &[]);
            (answer.status().as_u16(), header(&answer, "x-request-id"))
        })
        .collect();
    assert_eq!(
        ids.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
        [200, 200, 429, 429]
    );
    for (_, id) in &ids[2..] {
        server_span(&receiver, id);
    }
    let sent = upstream.last_header("traceparent");
    assert!(sent[0].ends_with("-00"), "not sampled: {}", sent[0]);
    let allowed: Vec<&String> = ids[..2].iter().map(|(_, id)| id).collect();
    let traced = receiver.spans();
    assert!(
        !traced.iter().any(|s| allowed
            .iter()
            .any(|id| attr(s, "floodgate.ref") == id.as_str())),
        "no allowed request is traced at ratio 0"
    );
}

#[test]
fn a_reload_that_changes_telemetry_starts_a_new_exporter() {
    let upstream = Upstream::start();
    let receiver = OtlpReceiver::start();
    let extra = telemetry(&receiver.endpoint, "service_name = \"before\"");
    let proxy = Proxy::start(&[&upstream.addr], &extra);
    let id = header(&proxy.get("/", &[]), "x-request-id");
    assert_eq!(server_span(&receiver, &id)["service"], "before");
    proxy.rewrite_config(|text| text.replace("\"before\"", "\"after\""));
    proxy.reload("success");
    let id = header(&proxy.get("/", &[]), "x-request-id");
    assert_eq!(server_span(&receiver, &id)["service"], "after");
}

/// One round: a one-second load of 4 clients.
struct Round {
    rate: f64,
    p99: Duration,
    slowest: Duration,
    /// The proxy's CPU (user and system) per request, in clock ticks.
    cpu: f64,
}

/// The CPU the process `pid` has used, in clock ticks.
fn cpu_ticks(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let after_name = &stat[stat.rfind(')').expect("(name)") + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // utime and stime: fields 14 and 15 of stat, 12 and 13 after the name.
    fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap()
}

fn round(proxy: &Proxy) -> Round {
    let before = cpu_ticks(proxy.pid());
    let report: LoadReport = hammer(
        &[proxy.url("/")],
        4,
        Duration::from_secs(1),
        Duration::ZERO,
        &[],
    );
    let cpu = cpu_ticks(proxy.pid()) - before;
    assert_eq!(report.count(200), report.total(), "{:?}", report.statuses);
    Round {
        rate: report.total() as f64 / report.span().max(0.001),
        p99: report.quantile(0.99),
        slowest: report.max_latency(),
        cpu: cpu / report.total().max(1) as f64,
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The medians of 7 paired rounds' ratios (req/s, p99, CPU per request), `traced` against
/// `plain` (tracing to a healthy collector), the order within a pair alternating so drift
/// weighs on both alike; and the slowest traced answer.
fn paired_rounds(plain: &Proxy, traced: &Proxy) -> ([f64; 3], Duration) {
    let (mut ratios, mut slowest) = ([vec![], vec![], vec![]], Duration::ZERO);
    for pair in 0..7 {
        let (base, with) = match pair % 2 {
            0 => (round(plain), round(traced)),
            _ => {
                let with = round(traced);
                (round(plain), with)
            }
        };
        ratios[0].push(with.rate / base.rate);
        ratios[1].push(with.p99.as_secs_f64() / base.p99.as_secs_f64().max(0.000_1));
        ratios[2].push(with.cpu / base.cpu.max(0.000_1));
        slowest = slowest.max(with.slowest);
    }
    eprintln!("rounds: req/s, p99, CPU a request × {ratios:.3?}");
    (ratios.map(median), slowest)
}

#[test]
fn a_collector_down_failing_or_slow_costs_requests_nothing_and_drops_are_counted() {
    let upstream = Upstream::start();
    // The baseline: the same proxy, tracing every request to a collector that takes them.
    let healthy = OtlpReceiver::discarding();
    let plain = Proxy::start(&[&upstream.addr], &telemetry(&healthy.endpoint, ""));
    let failing = OtlpReceiver::start_with(500, Duration::ZERO);
    let slow = OtlpReceiver::start_with(200, Duration::from_secs(12));
    let closed = format!("http://127.0.0.1:{}", free_port());
    for (what, endpoint) in [
        ("down", closed.as_str()),
        ("answering 500", failing.endpoint.as_str()),
        ("slow", slow.endpoint.as_str()),
    ] {
        let traced = Proxy::start(&[&upstream.addr], &telemetry(endpoint, ""));
        let ([rate, p99, cpu], slowest) = paired_rounds(&plain, &traced);
        eprintln!("collector {what}: req/s × {rate:.3}, p99 × {p99:.3}, CPU a request × {cpu:.3}, slowest {slowest:?}");
        // Generous bounds: the test machine is shared (two cores, other builds), and single
        // rounds move by ±50 % and more. What they catch: a request that waited on the collector
        // would take its 5 s timeout; an exporter that spun would show in the CPU.
        assert!(
            slowest < Duration::from_secs(2),
            "collector {what}: {slowest:?}"
        );
        assert!(rate >= 0.6, "collector {what}: req/s × {rate:.3}");
        assert!(p99 <= 2.5, "collector {what}: p99 × {p99:.3}");
        assert!(cpu <= 1.3, "collector {what}: CPU a request × {cpu:.3}");
        let deadline = Instant::now() + Duration::from_secs(20);
        while traced.metric("floodgate_trace_spans_dropped_total") == 0.0 {
            assert!(
                Instant::now() < deadline,
                "collector {what}: no drop counted"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let warnings = traced.log().matches("traces: ").count();
        assert_eq!(
            warnings,
            1,
            "collector {what}: one warning a minute:\n{}",
            traced.log()
        );
    }
}
