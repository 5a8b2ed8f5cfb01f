//! Requests that claim a crawler, by the category they showed and whether the claim was
//! verified: `floodgate_bot_requests_total{category, verified}`; scored requests' signals:
//! `floodgate_bot_signals_total{signal}`.

use crate::identity::{Category, Signal, Signals};
use prometheus::core::Collector;
use prometheus::{IntCounter, IntCounterVec, Opts};

/// The handles of `floodgate_bot_requests_total`, every pair of labels resolved once.
#[derive(Clone)]
pub struct BotMetrics {
    family: IntCounterVec,
    /// By category (in `Category::ALL` order), then unverified and verified.
    requests: Vec<[IntCounter; 2]>,
    signal_family: IntCounterVec,
    /// By signal, in `Signal::ALL` order.
    signals: Vec<IntCounter>,
}

impl BotMetrics {
    pub(super) fn new() -> Self {
        let family = IntCounterVec::new(
            Opts::new(
                "floodgate_bot_requests_total",
                "Requests whose User-Agent names a crawler of the catalogue, by the category they \
                 showed (spoofed: the address is not the crawler's) and whether the claim was \
                 verified.",
            ),
            &["category", "verified"],
        )
        .expect("static metric definition");
        let requests = Category::ALL
            .iter()
            .map(|c| ["false", "true"].map(|v| family.with_label_values(&[c.word(), v])))
            .collect();
        let signal_family = IntCounterVec::new(
            Opts::new(
                "floodgate_bot_signals_total",
                "Signals shown by the requests whose bot score was worked out (only when a \
                 policy, a header or the log asks for it), by signal.",
            ),
            &["signal"],
        )
        .expect("static metric definition");
        let signals = Signal::ALL
            .iter()
            .map(|s| signal_family.with_label_values(&[s.word()]))
            .collect();
        Self {
            family,
            requests,
            signal_family,
            signals,
        }
    }

    /// Counts each of a scored request's `signals`.
    pub fn count_signals(&self, signals: Signals) {
        for signal in signals.iter() {
            if let Some(counter) = self.signals.get(signal.index()) {
                counter.inc();
            }
        }
    }

    pub(super) fn signals_collector(&self) -> Box<dyn Collector> {
        Box::new(self.signal_family.clone())
    }

    /// Counts one request of `category`, `verified` or not.
    pub fn count(&self, category: Category, verified: bool) {
        let at = Category::ALL.iter().position(|c| *c == category);
        if let Some(pair) = at.and_then(|i| self.requests.get(i)) {
            pair[usize::from(verified)].inc();
        }
    }

    pub(super) fn collector(&self) -> Box<dyn Collector> {
        Box::new(self.family.clone())
    }
}
