//! Prometheus series: what was decided, per policy, and what went wrong upstream.
//!
//! Labels are bounded by the config (policy names) and by code (decisions, error kinds);
//! never an identity. Handles for each policy's series are resolved once, so the request path
//! increments an atomic and takes no lock.

use prometheus::{
    Encoder, Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry, TextEncoder,
};

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

/// The `kind` label values of `floodgate_store_errors_total`.
pub const STORE_ERROR_KINDS: [&str; 3] = ["timeout", "unavailable", "breaker_open"];

/// The shared store's series: call latency, errors, breaker state, shortcuts taken.
#[derive(Clone)]
pub struct StoreMetrics {
    /// Latency of store calls that got an answer.
    pub call_seconds: Histogram,
    /// Failed or skipped store calls, by kind.
    pub errors: IntCounterVec,
    /// 1 while the circuit breaker is open.
    pub breaker_open: IntGauge,
    /// Requests refused from the deny cache without a store call.
    pub deny_cache_hits: IntCounter,
    /// Requests decided by the local fallback store.
    pub fallbacks: IntCounter,
}

impl StoreMetrics {
    fn new() -> Self {
        let buckets = vec![
            0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1,
        ];
        let errors = IntCounterVec::new(
            Opts::new(
                "floodgate_store_errors_total",
                "Store calls that failed (timeout, unavailable) or were skipped while the breaker was open.",
            ),
            &["kind"],
        )
        .expect("static metric definition");
        for kind in STORE_ERROR_KINDS {
            errors.with_label_values(&[kind]);
        }
        Self {
            call_seconds: Histogram::with_opts(
                HistogramOpts::new("floodgate_store_call_seconds", "Latency of answered store calls.")
                    .buckets(buckets),
            )
            .expect("static metric definition"),
            errors,
            breaker_open: IntGauge::new(
                "floodgate_store_breaker_open",
                "1 while the store's circuit breaker is open (calls skipped, on_error applies).",
            )
            .expect("static metric definition"),
            deny_cache_hits: IntCounter::new(
                "floodgate_deny_cache_hits_total",
                "Requests refused from the deny cache without calling the store.",
            )
            .expect("static metric definition"),
            fallbacks: IntCounter::new(
                "floodgate_store_fallback_total",
                "Requests decided by the local fallback buckets because the store could not decide.",
            )
            .expect("static metric definition"),
        }
    }

    fn collectors(&self) -> Vec<Box<dyn prometheus::core::Collector>> {
        vec![
            Box::new(self.call_seconds.clone()),
            Box::new(self.errors.clone()),
            Box::new(self.breaker_open.clone()),
            Box::new(self.deny_cache_hits.clone()),
            Box::new(self.fallbacks.clone()),
        ]
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
        let store = StoreMetrics::new();
        let mut collectors = store.collectors();
        collectors.push(Box::new(access.clone()));
        collectors.push(Box::new(invalid_tokens.clone()));
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
            store,
        }
    }

    /// The counters of policy `name`, created at zero so they show before the first request.
    pub fn policy(&self, name: &str) -> PolicyCounters {
        PolicyCounters {
            by_decision: Decision::ALL.map(|d| self.requests.with_label_values(&[name, d.label()])),
        }
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
