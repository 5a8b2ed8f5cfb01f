//! The shared store's series: call latency, errors, breaker state, shortcuts taken.

use super::counters::ByLabel;
use super::vocab::StoreErrorKind;
use prometheus::{Histogram, HistogramOpts, IntCounter, IntGauge};

/// The shared store's series: call latency, errors, breaker state, shortcuts taken.
#[derive(Clone)]
pub struct StoreMetrics {
    /// Latency of store calls that got an answer.
    pub call_seconds: Histogram,
    /// Failed or skipped store calls, by kind.
    pub errors: ByLabel<StoreErrorKind>,
    /// 1 while the circuit breaker is open.
    pub breaker_open: IntGauge,
    /// Requests refused from the deny cache without a store call.
    pub deny_cache_hits: IntCounter,
    /// Requests decided by the local fallback store.
    pub fallbacks: IntCounter,
    /// Store calls that missed their budget and answered later (the answer was still learned).
    pub late_replies: IntCounter,
    /// Requests of a refused caller answered by another request's call instead of their own.
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
    pub(super) fn new() -> Self {
        let buckets = vec![
            0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1,
        ];
        let errors = ByLabel::new(
            "floodgate_store_errors_total",
            "Store calls that failed (timeout, unavailable) or were skipped while the breaker was open.",
            "kind",
        );
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
                "Requests of a just-refused caller answered by another request's store call.",
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

    pub(super) fn collectors(&self) -> Vec<Box<dyn prometheus::core::Collector>> {
        vec![
            Box::new(self.call_seconds.clone()),
            self.errors.collector(),
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
