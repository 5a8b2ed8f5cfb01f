//! The shared store's series: call latency, errors, breaker state, shortcuts taken. The proxy
//! registers them with the rest of its series (`telemetry`).

use prometheus::{Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, Opts};

/// Why a store call failed (`kind` of `floodgate_store_errors_total`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreErrorKind {
    /// No answer within the budget.
    Timeout,
    /// An error answer, or no connection.
    Unavailable,
    /// Skipped: the circuit breaker is open.
    BreakerOpen,
}

impl StoreErrorKind {
    /// Every value, in label order.
    pub const ALL: [StoreErrorKind; 3] = [
        StoreErrorKind::Timeout,
        StoreErrorKind::Unavailable,
        StoreErrorKind::BreakerOpen,
    ];

    /// How many values there are: the length of arrays indexed by the variant.
    pub const COUNT: usize = StoreErrorKind::ALL.len();

    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            StoreErrorKind::Timeout => "timeout",
            StoreErrorKind::Unavailable => "unavailable",
            StoreErrorKind::BreakerOpen => "breaker_open",
        }
    }
}

/// `floodgate_store_errors_total`, one counter per kind resolved once.
#[derive(Clone)]
pub struct ErrorCounters {
    family: IntCounterVec,
    counters: [IntCounter; StoreErrorKind::COUNT],
}

impl ErrorCounters {
    fn new() -> Self {
        let family = IntCounterVec::new(
            Opts::new(
                "floodgate_store_errors_total",
                "Store calls that failed (timeout, unavailable) or were skipped while the breaker was open.",
            ),
            &["kind"],
        )
        .expect("static metric definition");
        let counters = StoreErrorKind::ALL.map(|k| family.with_label_values(&[k.label()]));
        Self { family, counters }
    }

    /// Counts one error of `kind`.
    pub fn inc(&self, kind: StoreErrorKind) {
        self.counters[kind as usize].inc();
    }

    /// The current count of `kind`.
    pub fn get(&self, kind: StoreErrorKind) -> u64 {
        self.counters[kind as usize].get()
    }
}

/// The shared store's series: call latency, errors, breaker state, shortcuts taken.
#[derive(Clone)]
pub struct StoreMetrics {
    /// Latency of store calls that got an answer.
    pub call_seconds: Histogram,
    /// Failed or skipped store calls, by kind.
    pub errors: ErrorCounters,
    /// 1 while the circuit breaker is open.
    pub breaker_open: IntGauge,
    /// Requests refused from the deny cache without a store call.
    pub deny_cache_hits: IntCounter,
    /// Requests decided by the local fallback store.
    pub fallbacks: IntCounter,
    /// Store calls that missed their budget and answered later (the answer was still learned).
    pub late_replies: IntCounter,
    /// Requests of a just-refused caller refused at once while another of its requests asks the
    /// store about its lapsed refusal.
    pub coalesced: IntCounter,
    /// The number of instances the local fallback divides by.
    pub fleet_size: IntGauge,
    /// Requests decided from a hot caller's lease, without a Redis call.
    pub lease_hits: IntCounter,
    /// Leases granted to hot callers.
    pub leases: IntCounter,
    /// Lapsed leases whose unspent tokens were given back.
    pub lease_refunds: IntCounter,
}

impl StoreMetrics {
    /// Every series, at zero, not registered anywhere yet.
    pub fn new() -> Self {
        let buckets = vec![
            0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1,
        ];
        let errors = ErrorCounters::new();
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
            late_replies: IntCounter::new(
                "floodgate_store_late_replies_total",
                "Store calls that missed the budget (decided by on_error) whose answer arrived later and was learned.",
            )
            .expect("static metric definition"),
            coalesced: IntCounter::new(
                "floodgate_store_coalesced_total",
                "Requests of a just-refused caller refused at once while another of its requests asks the store.",
            )
            .expect("static metric definition"),
            lease_hits: IntCounter::new(
                "floodgate_store_lease_hits_total",
                "Requests decided from a hot caller's lease of tokens, without a Redis call.",
            )
            .expect("static metric definition"),
            leases: IntCounter::new(
                "floodgate_store_leases_total",
                "Leases of tokens granted to hot callers (taken from their Redis buckets first).",
            )
            .expect("static metric definition"),
            lease_refunds: IntCounter::new(
                "floodgate_store_lease_refunds_total",
                "Lapsed leases whose unspent tokens were given back to Redis.",
            )
            .expect("static metric definition"),
            fleet_size: IntGauge::new(
                "floodgate_store_fleet_size",
                "Instances sharing the store, as the local fallback divides by (pinned or learned).",
            )
            .expect("static metric definition"),
        }
    }

    /// Counts a failed or skipped call.
    pub fn count_error(&self, kind: StoreErrorKind) {
        self.errors.inc(kind);
    }

    /// Every series, for registration.
    pub fn collectors(&self) -> Vec<Box<dyn prometheus::core::Collector>> {
        vec![
            Box::new(self.call_seconds.clone()),
            Box::new(self.errors.family.clone()),
            Box::new(self.breaker_open.clone()),
            Box::new(self.deny_cache_hits.clone()),
            Box::new(self.fallbacks.clone()),
            Box::new(self.late_replies.clone()),
            Box::new(self.coalesced.clone()),
            Box::new(self.fleet_size.clone()),
            Box::new(self.lease_hits.clone()),
            Box::new(self.leases.clone()),
            Box::new(self.lease_refunds.clone()),
        ]
    }
}

impl Default for StoreMetrics {
    fn default() -> Self {
        Self::new()
    }
}
