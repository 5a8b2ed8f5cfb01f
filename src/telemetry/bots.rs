//! Requests that claim a crawler, by the category they showed and whether the claim was
//! verified: `floodgate_bot_requests_total{category, verified}`.

use crate::identity::Category;
use prometheus::core::Collector;
use prometheus::{IntCounter, IntCounterVec, Opts};

/// The handles of `floodgate_bot_requests_total`, every pair of labels resolved once.
#[derive(Clone)]
pub struct BotMetrics {
    family: IntCounterVec,
    /// By category (in `Category::ALL` order), then unverified and verified.
    requests: Vec<[IntCounter; 2]>,
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
        Self { family, requests }
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
