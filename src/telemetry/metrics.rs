//! Prometheus series: what was decided, per policy, and what went wrong upstream.
//!
//! Labels are bounded by the config (policy names) and by code (the enums of `vocab`); never
//! an identity. Every handle is resolved once, so the request path increments an atomic and
//! takes no lock.

use super::backends::BackendGauge;
use super::bots::BotMetrics;
use super::certificates::CertificateMetrics;
use super::challenges::ChallengeMetrics;
use super::counters::ByLabel;
use super::crowdsec::CrowdSecMetrics;
use super::overload::OverloadMetrics;
use super::policy::{PolicyCounters, PolicyFamilies};
use super::privacy_pass::PrivacyPassCounters;
use super::proofs::ProofCounters;
use super::robots::RobotsCounters;
use super::signed::SignedMetrics;
use super::vocab::{
    AccessList, ConnectionRefusal, ReloadResult, RequestDecision, UpstreamErrorKind,
};
use floodgate_limiter::StoreMetrics;
use prometheus::{
    Encoder, Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry, TextEncoder,
};

/// The `class` label values of `floodgate_upstream_responses_total`.
const UPSTREAM_CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];

/// The `remedy` label values of `floodgate_blocked_total` (the words of `control::Remedy`),
/// shown at zero so a dashboard has the series before the first blocked request.
pub const BLOCK_REMEDIES: [&str; 3] = ["ban", "throttle", "challenge"];

/// The registry and the series Floodgate exports.
pub struct Metrics {
    registry: Registry,
    /// Every series' name, in the order registered.
    names: Vec<String>,
    policies: PolicyFamilies,
    /// Requests by what became of them (the access log's `decision`).
    pub decisions: ByLabel<RequestDecision>,
    /// Requests that could not be proxied, by kind.
    pub upstream_errors: ByLabel<UpstreamErrorKind>,
    /// Requests on the allow-list or the deny-list.
    pub access: ByLabel<AccessList>,
    /// Requests refused 401 for a bearer token that did not verify.
    pub invalid_tokens: IntCounter,
    /// Requests refused 403 by an operator's ban.
    pub banned: IntCounter,
    /// Requests refused by the blocklist (CrowdSec's decisions), by remedy.
    pub blocked: IntCounterVec,
    /// Changes made through the control API, by action (`ban`, `unban`, `override`,
    /// `unoverride`, `reset`).
    pub admin_changes: IntCounterVec,
    /// Every change asked of the control API, by action and outcome.
    pub admin_attempts: IntCounterVec,
    /// Control API calls refused for a missing or wrong token.
    pub admin_unauthorized: IntCounter,
    /// Admin calls not tried: their address failed too many tokens lately.
    pub admin_auth_slowed: IntCounter,
    /// Time the limiting step took (store call included).
    pub limiter_seconds: Histogram,
    /// Backend responses by status class, `1xx` … `5xx`.
    upstream_classes: [IntCounter; 5],
    /// Time from choosing a backend to its response header.
    pub upstream_seconds: Histogram,
    /// Config reloads by result.
    pub reloads: ByLabel<ReloadResult>,
    /// Downstream connections closed as soon as they were accepted, by reason.
    pub connections_refused: ByLabel<ConnectionRefusal>,
    /// Downstream connections open now.
    pub connections_open: IntGauge,
    /// The shared store's series.
    pub store: StoreMetrics,
    /// The CrowdSec bouncer's series.
    pub crowdsec: CrowdSecMetrics,
    /// Requests claiming a crawler, by category and verification.
    pub bots: BotMetrics,
    /// Signed agents' requests and key-directory fetches.
    pub signed: SignedMetrics,
    /// Requests carrying verified sources' values, by what was known of them.
    pub proofs: ProofCounters,
    /// Crawlers' requests by robots.txt's verdict, and requests for the trap.
    pub robots: RobotsCounters,
    /// Privacy Pass tokens presented at the challenge.
    pub privacy_pass: PrivacyPassCounters,
    /// `floodgate_challenges_total`.
    pub challenges: ChallengeMetrics,
    /// `floodgate_tls_cert_expiry_seconds` and `floodgate_acme_orders_total`.
    pub certificates: CertificateMetrics,
    /// Whether each configured backend is up.
    pub backends: BackendGauge,
    /// Overload protection: in flight, limits, shed requests, the switch.
    pub overload: OverloadMetrics,
    /// Spans dropped: the export queue was full, or the collector did not take them.
    pub trace_spans_dropped: IntCounter,
    /// Spans the collector took.
    pub trace_spans_exported: IntCounter,
}

/// A latency histogram from 10 µs to 10 s.
fn latency(name: &str, help: &str) -> Histogram {
    let buckets = vec![
        0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01,
        0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
    ];
    Histogram::with_opts(HistogramOpts::new(name, help).buckets(buckets))
        .expect("static metric definition")
}

impl Metrics {
    /// Registers every series.
    pub fn new() -> Self {
        let build_info = IntGaugeVec::new(
            Opts::new(
                "floodgate_build_info",
                "Always 1; labelled with the version.",
            ),
            &["version"],
        )
        .expect("static metric definition");
        build_info
            .with_label_values(&[env!("CARGO_PKG_VERSION")])
            .set(1);
        let upstream_responses = IntCounterVec::new(
            Opts::new(
                "floodgate_upstream_responses_total",
                "Backend responses by status class.",
            ),
            &["class"],
        )
        .expect("static metric definition");
        let blocked = IntCounterVec::new(
            Opts::new(
                "floodgate_blocked_total",
                "Requests refused by CrowdSec's decisions, by remedy (ban: 403, throttle: 429).",
            ),
            &["remedy"],
        )
        .expect("static metric definition");
        for remedy in BLOCK_REMEDIES {
            blocked.with_label_values(&[remedy]);
        }
        let mut metrics = Self {
            registry: Registry::new(),
            names: Vec::new(),
            policies: PolicyFamilies::new(),
            decisions: ByLabel::new(
                "floodgate_decisions_total",
                "Requests by what became of them: the access log's decision word.",
                "decision",
            ),
            upstream_errors: ByLabel::new(
                "floodgate_upstream_errors_total",
                "Requests that could not be proxied, by kind (connect, timeout, other; aborted: failed after the response started).",
                "kind",
            ),
            access: ByLabel::new(
                "floodgate_access_total",
                "Requests on the allow-list (not limited) or the deny-list (403).",
                "list",
            ),
            invalid_tokens: IntCounter::new(
                "floodgate_invalid_tokens_total",
                "Requests refused with 401 for a bearer token that did not verify.",
            )
            .expect("static metric definition"),
            banned: IntCounter::new(
                "floodgate_banned_total",
                "Requests refused with 403 by a ban made through the control API.",
            )
            .expect("static metric definition"),
            blocked,
            admin_changes: IntCounterVec::new(
                Opts::new(
                    "floodgate_admin_changes_total",
                    "Changes made through the control API, by action.",
                ),
                &["action"],
            )
            .expect("static metric definition"),
            admin_attempts: IntCounterVec::new(
                Opts::new(
                    "floodgate_admin_attempts_total",
                    "Changes asked of the control API, by action and outcome (created, existing, \
                     removed, absent, refused, unavailable, unknown).",
                ),
                &["action", "outcome"],
            )
            .expect("static metric definition"),
            admin_unauthorized: IntCounter::new(
                "floodgate_admin_unauthorized_total",
                "Control API calls refused with 401 for a missing or wrong token.",
            )
            .expect("static metric definition"),
            admin_auth_slowed: IntCounter::new(
                "floodgate_admin_auth_slowed_total",
                "Admin calls answered 429 untried: their address failed too many tokens lately.",
            )
            .expect("static metric definition"),
            limiter_seconds: latency(
                "floodgate_limiter_seconds",
                "Time the limiting step took per request, store call included.",
            ),
            upstream_classes: UPSTREAM_CLASSES.map(|c| upstream_responses.with_label_values(&[c])),
            upstream_seconds: latency(
                "floodgate_upstream_seconds",
                "Time from choosing a backend to receiving its response header.",
            ),
            reloads: ByLabel::new(
                "floodgate_config_reloads_total",
                "Config reloads by result; a failed reload leaves the running config in place.",
                "result",
            ),
            connections_refused: ByLabel::new(
                "floodgate_connections_refused_total",
                "Downstream connections closed on accept: too many open (total) or from one address (per_ip).",
                "reason",
            ),
            connections_open: IntGauge::new(
                "floodgate_connections_open",
                "Downstream connections open now.",
            )
            .expect("static metric definition"),
            store: StoreMetrics::new(),
            crowdsec: CrowdSecMetrics::new(),
            bots: BotMetrics::new(),
            signed: SignedMetrics::new(),
            proofs: ProofCounters::new(),
            robots: RobotsCounters::new(),
            privacy_pass: PrivacyPassCounters::new(),
            challenges: ChallengeMetrics::new(),
            certificates: CertificateMetrics::new(),
            backends: BackendGauge::new(),
            overload: OverloadMetrics::new(),
            trace_spans_dropped: IntCounter::new(
                "floodgate_trace_spans_dropped_total",
                "Trace spans dropped: the export queue was full, or the OTLP collector did not take them (down, slow, an error).",
            )
            .expect("static metric definition"),
            trace_spans_exported: IntCounter::new(
                "floodgate_trace_spans_exported_total",
                "Trace spans the OTLP collector took.",
            )
            .expect("static metric definition"),
        };
        let mut collectors = metrics.store.collectors();
        collectors.extend(metrics.policies.collectors());
        collectors.extend(metrics.crowdsec.collectors());
        collectors.extend(metrics.signed.collectors());
        collectors.extend(metrics.certificates.collectors());
        collectors.extend(metrics.overload.collectors());
        collectors.extend(metrics.robots.collectors());
        collectors.extend([
            metrics.decisions.collector(),
            metrics.access.collector(),
            metrics.bots.collector(),
            metrics.bots.signals_collector(),
            metrics.challenges.collector(),
            metrics.proofs.collector(),
            metrics.privacy_pass.collector(),
            Box::new(metrics.invalid_tokens.clone()),
            Box::new(metrics.banned.clone()),
            Box::new(metrics.blocked.clone()),
            Box::new(metrics.admin_changes.clone()),
            Box::new(metrics.admin_attempts.clone()),
            Box::new(metrics.admin_unauthorized.clone()),
            Box::new(metrics.admin_auth_slowed.clone()),
            Box::new(metrics.limiter_seconds.clone()),
            Box::new(metrics.upstream_seconds.clone()),
            Box::new(upstream_responses),
            metrics.reloads.collector(),
            metrics.connections_refused.collector(),
            Box::new(metrics.connections_open.clone()),
            Box::new(metrics.trace_spans_dropped.clone()),
            Box::new(metrics.trace_spans_exported.clone()),
            metrics.upstream_errors.collector(),
            metrics.backends.collector(),
            Box::new(build_info),
        ]);
        for collector in collectors {
            let names = collector.desc().into_iter().map(|d| d.fq_name.clone());
            metrics.names.extend(names);
            metrics
                .registry
                .register(collector)
                .expect("each series is registered once");
        }
        metrics
    }

    /// The name of every series exported, whether or not it has a value yet (a family
    /// labelled by policy or pool has none before the first).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The series of policy `name`, created at zero so they show before the first request.
    pub fn policy(&self, name: &str) -> PolicyCounters {
        self.policies.policy(name)
    }

    /// Every policy's requests so far on this instance, `[allowed, throttled]`, by policy name.
    pub fn request_tally(&self) -> Vec<(String, [u64; 2])> {
        self.policies.tally()
    }

    /// Counts a backend response by the class of its status.
    pub fn count_upstream_response(&self, status: u16) {
        let class = usize::from(status / 100).clamp(1, 5) - 1;
        self.upstream_classes[class].inc();
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
    use crate::telemetry::{PolicyOutcome, SettleResult};

    #[test]
    fn policy_counters_render_with_their_labels() {
        let metrics = Metrics::new();
        metrics.policy("per-user").count(PolicyOutcome::Throttled);
        let text = metrics.render();
        assert!(
            text.contains(r#"floodgate_requests_total{decision="throttled",policy="per-user"} 1"#)
        );
        assert!(
            text.contains(r#"floodgate_requests_total{decision="allowed",policy="per-user"} 0"#)
        );
        assert!(text.contains("floodgate_build_info"));
    }

    #[test]
    fn the_tally_reads_allowed_and_throttled_by_policy() {
        let metrics = Metrics::new();
        let login = metrics.policy("login");
        login.count(PolicyOutcome::Allowed);
        login.count(PolicyOutcome::Allowed);
        login.count(PolicyOutcome::Throttled);
        login.count(PolicyOutcome::Denied);
        metrics.policy("api").count(PolicyOutcome::Throttled);
        assert_eq!(
            metrics.request_tally(),
            vec![("api".to_owned(), [0, 1]), ("login".to_owned(), [2, 1])]
        );
    }

    #[test]
    fn the_rules_series_of_a_policy_show_at_zero() {
        let metrics = Metrics::new();
        let counters = metrics.policy("login");
        counters.settled(SettleResult::Refunded);
        let text = metrics.render();
        for series in [
            r#"floodgate_settles_total{policy="login",result="refunded"} 1"#,
            r#"floodgate_settles_total{policy="login",result="failed"} 0"#,
            r#"floodgate_held_total{policy="login",result="overflow"} 0"#,
            r#"floodgate_held_requests{policy="login"} 0"#,
            r#"floodgate_in_flight{policy="login"} 0"#,
            r#"floodgate_in_flight_refused_total{policy="login"} 0"#,
            r#"floodgate_penalties_total{event="started",policy="login"} 0"#,
        ] {
            assert!(text.contains(series), "{series}");
        }
    }

    #[test]
    fn every_label_value_shows_at_zero() {
        let text = Metrics::new().render();
        for kind in UpstreamErrorKind::ALL {
            let series = format!(
                "floodgate_upstream_errors_total{{kind=\"{}\"}} 0",
                kind.label()
            );
            assert!(text.contains(&series), "{series}");
        }
        assert!(text.contains(r#"floodgate_access_total{list="deny"} 0"#));
        assert!(text.contains(r#"floodgate_store_errors_total{kind="breaker_open"} 0"#));
        assert!(text.contains(r#"floodgate_connections_refused_total{reason="per_ip"} 0"#));
        assert!(text.contains("floodgate_connections_open 0"));
        assert!(text.contains(r#"floodgate_blocked_total{remedy="challenge"} 0"#));
    }
}
