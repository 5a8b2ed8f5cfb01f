//! Prometheus series: what was decided, per policy, and what went wrong upstream.
//!
//! Labels are bounded by the config (policy names) and by code (decisions, error kinds);
//! never an identity. Handles for each policy's series are resolved once, so the request path
//! increments an atomic and takes no lock.

mod store;

pub use store::{StoreMetrics, STORE_ERROR_KINDS};

use prometheus::{
    Encoder, Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGaugeVec, Opts, Registry,
    TextEncoder,
};

/// The `class` label values of `floodgate_upstream_responses_total`.
const UPSTREAM_CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];

/// The `kind` label values of `floodgate_upstream_errors_total`.
pub const UPSTREAM_ERROR_KINDS: [&str; 3] = ["connect", "timeout", "other"];

/// What happened to a request, as seen by one policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The request passed.
    Allowed,
    /// This policy's bucket was short and the request was refused.
    Throttled,
    /// This policy's bucket had the tokens, but another policy refused the request, so
    /// nothing was taken here.
    ThrottledByOther,
    /// This shadow policy's bucket was short; the request was let through.
    ShadowThrottled,
    /// The store could not decide.
    Error,
}

impl Decision {
    /// Every decision, in label order.
    pub const ALL: [Decision; 5] = [
        Decision::Allowed,
        Decision::Throttled,
        Decision::ThrottledByOther,
        Decision::ShadowThrottled,
        Decision::Error,
    ];

    /// The `decision` label value.
    pub fn label(self) -> &'static str {
        match self {
            Decision::Allowed => "allowed",
            Decision::Throttled => "throttled",
            Decision::ThrottledByOther => "throttled_by_other",
            Decision::ShadowThrottled => "shadow_throttled",
            Decision::Error => "error",
        }
    }
}

/// One policy's request counters, one per decision.
#[derive(Clone)]
pub struct PolicyCounters {
    by_decision: [IntCounter; 5],
}

impl PolicyCounters {
    /// Counts one request with `decision`.
    pub fn count(&self, decision: Decision) {
        self.by_decision[decision as usize].inc();
    }
}

/// The registry and the series Floodgate exports.
pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    upstream_errors: IntCounterVec,
    /// Requests on the allow-list (`list="allow"`) or the deny-list (`list="deny"`).
    pub access: IntCounterVec,
    /// Requests refused 401 for a bearer token that did not verify.
    pub invalid_tokens: IntCounter,
    /// Time the limiting step took (store call included).
    pub limiter_seconds: Histogram,
    /// Backend responses by status class, `1xx` … `5xx`, resolved once (no lookup per request).
    upstream_classes: [IntCounter; 5],
    /// Time from choosing a backend to its response header.
    pub upstream_seconds: Histogram,
    /// Config reloads by result (`success`, `failure`).
    pub reloads: IntCounterVec,
    /// The shared store's series.
    pub store: StoreMetrics,
}

impl Metrics {
    /// Registers every series.
    pub fn new() -> Self {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new(
                "floodgate_requests_total",
                "Requests seen by each policy, by decision.",
            ),
            &["policy", "decision"],
        )
        .expect("static metric definition");
        let upstream_errors = IntCounterVec::new(
            Opts::new(
                "floodgate_upstream_errors_total",
                "Requests that could not be proxied, by kind (connect, timeout, other).",
            ),
            &["kind"],
        )
        .expect("static metric definition");
        let build_info = IntGaugeVec::new(
            Opts::new(
                "floodgate_build_info",
                "Always 1; labelled with the version.",
            ),
            &["version"],
        )
        .expect("static metric definition");
        for kind in UPSTREAM_ERROR_KINDS {
            upstream_errors.with_label_values(&[kind]);
        }
        build_info
            .with_label_values(&[env!("CARGO_PKG_VERSION")])
            .set(1);
        let access = IntCounterVec::new(
            Opts::new(
                "floodgate_access_total",
                "Requests on the allow-list (not limited) or the deny-list (403).",
            ),
            &["list"],
        )
        .expect("static metric definition");
        for list in ["allow", "deny"] {
            access.with_label_values(&[list]);
        }
        let invalid_tokens = IntCounter::new(
            "floodgate_invalid_tokens_total",
            "Requests refused with 401 for a bearer token that did not verify.",
        )
        .expect("static metric definition");
        let latency = |name: &str, help: &str| {
            let buckets = vec![
                0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005,
                0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
            ];
            Histogram::with_opts(HistogramOpts::new(name, help).buckets(buckets))
                .expect("static metric definition")
        };
        let limiter_seconds = latency(
            "floodgate_limiter_seconds",
            "Time the limiting step took per request, store call included.",
        );
        let upstream_seconds = latency(
            "floodgate_upstream_seconds",
            "Time from choosing a backend to receiving its response header.",
        );
        let upstream_responses = labelled(
            "floodgate_upstream_responses_total",
            "Backend responses by status class.",
            "class",
            &UPSTREAM_CLASSES,
        );
        let reloads = labelled(
            "floodgate_config_reloads_total",
            "Config reloads by result; a failed reload leaves the running config in place.",
            "result",
            &["success", "failure"],
        );
        let store = StoreMetrics::new();
        let mut collectors = store.collectors();
        collectors.push(Box::new(access.clone()));
        collectors.push(Box::new(invalid_tokens.clone()));
        collectors.push(Box::new(limiter_seconds.clone()));
        collectors.push(Box::new(upstream_seconds.clone()));
        collectors.push(Box::new(upstream_responses.clone()));
        collectors.push(Box::new(reloads.clone()));
        collectors.push(Box::new(requests.clone()));
        collectors.push(Box::new(upstream_errors.clone()));
        collectors.push(Box::new(build_info));
        for collector in collectors {
            registry
                .register(collector)
                .expect("each series is registered once");
        }
        Self {
            registry,
            requests,
            upstream_errors,
            access,
            invalid_tokens,
            limiter_seconds,
            upstream_classes: UPSTREAM_CLASSES.map(|c| upstream_responses.with_label_values(&[c])),
            upstream_seconds,
            reloads,
            store,
        }
    }

    /// The counters of policy `name`, created at zero so they show before the first request.
    pub fn policy(&self, name: &str) -> PolicyCounters {
        PolicyCounters {
            by_decision: Decision::ALL.map(|d| self.requests.with_label_values(&[name, d.label()])),
        }
    }

    /// Counts a backend response by the class of its status.
    pub fn count_upstream_response(&self, status: u16) {
        let class = usize::from(status / 100).clamp(1, 5) - 1;
        self.upstream_classes[class].inc();
    }

    /// Counts a request that failed upstream; `kind` is one of a fixed few.
    pub fn count_upstream_error(&self, kind: &'static str) {
        self.upstream_errors.with_label_values(&[kind]).inc();
    }

    /// Every series in the Prometheus text format.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut out)
            .expect("writing to a Vec cannot fail");
        String::from_utf8(out).expect("the text format is UTF-8")
    }
}

/// A counter family with one label, its values created at zero.
fn labelled(name: &str, help: &str, label: &str, values: &[&str]) -> IntCounterVec {
    let family =
        IntCounterVec::new(Opts::new(name, help), &[label]).expect("static metric definition");
    for value in values {
        family.with_label_values(&[value]);
    }
    family
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_counters_render_with_their_labels() {
        let metrics = Metrics::new();
        metrics.policy("per-user").count(Decision::Throttled);
        let text = metrics.render();
        assert!(
            text.contains(r#"floodgate_requests_total{decision="throttled",policy="per-user"} 1"#)
        );
        assert!(
            text.contains(r#"floodgate_requests_total{decision="allowed",policy="per-user"} 0"#)
        );
        assert!(text.contains("floodgate_build_info"));
    }
}
