//! Prometheus series: what was decided, per policy, and what went wrong upstream.
//!
//! Labels are bounded by the config (policy names) and by code (decisions, error kinds);
//! never an identity. Handles for each policy's series are resolved once, so the request path
//! increments an atomic and takes no lock.

use prometheus::{Encoder, IntCounter, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder};

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
        for collector in [
            Box::new(requests.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(upstream_errors.clone()),
            Box::new(build_info),
        ] {
            registry
                .register(collector)
                .expect("each series is registered once");
        }
        Self {
            registry,
            requests,
            upstream_errors,
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
