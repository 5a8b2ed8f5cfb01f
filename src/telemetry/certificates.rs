//! Certificates and their orders: `floodgate_tls_cert_expiry_seconds{domain}` (when each
//! served certificate expires, Unix seconds: alert on it minus `time()`) and
//! `floodgate_acme_orders_total{result}` (ACME orders placed by this instance, by how they
//! ended).

use prometheus::core::Collector;
use prometheus::{IntCounterVec, IntGaugeVec, Opts};

/// How an ACME order ended (`result`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderResult {
    /// A certificate was issued and is served.
    Issued,
    /// The order failed at some step; the certificate in force, if any, stays.
    Failed,
}

impl OrderResult {
    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            Self::Issued => "issued",
            Self::Failed => "failed",
        }
    }
}

/// The handles of the certificate families.
#[derive(Clone)]
pub struct CertificateMetrics {
    expiry: IntGaugeVec,
    orders: IntCounterVec,
}

impl CertificateMetrics {
    pub(super) fn new() -> Self {
        let expiry = IntGaugeVec::new(
            Opts::new(
                "floodgate_tls_cert_expiry_seconds",
                "When the certificate served for a domain expires (its notAfter), in Unix \
                 seconds; the file certificate is named by its first DNS name.",
            ),
            &["domain"],
        )
        .expect("static metric definition");
        let orders = IntCounterVec::new(
            Opts::new(
                "floodgate_acme_orders_total",
                "ACME orders this instance placed, by how they ended (issued or failed).",
            ),
            &["result"],
        )
        .expect("static metric definition");
        for result in [OrderResult::Issued, OrderResult::Failed] {
            orders.with_label_values(&[result.label()]);
        }
        Self { expiry, orders }
    }

    /// The served certificates' expiries from now on: `(domain, Unix seconds)`; domains no
    /// longer served lose their series.
    pub fn set_expiries(&self, expiries: &[(String, i64)]) {
        self.expiry.reset();
        for (domain, not_after) in expiries {
            self.expiry.with_label_values(&[domain]).set(*not_after);
        }
    }

    /// Counts one order ending in `result`.
    pub fn count_order(&self, result: OrderResult) {
        self.orders.with_label_values(&[result.label()]).inc();
    }

    pub(super) fn collectors(&self) -> [Box<dyn Collector>; 2] {
        [Box::new(self.expiry.clone()), Box::new(self.orders.clone())]
    }
}
