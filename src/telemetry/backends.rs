//! `floodgate_backend_up{pool,backend}`: 1 while a configured backend is up, 0 while it is
//! down (failing its health check, or ejected). Labels come from the config (pool names,
//! backends as written), so they stay bounded; the series of a backend a reload removed goes.

use parking_lot::Mutex;
use prometheus::{IntGaugeVec, Opts};
use std::collections::HashSet;

/// The backend gauge and the label pairs it shows.
pub struct BackendGauge {
    gauge: IntGaugeVec,
    shown: Mutex<HashSet<(String, String)>>,
}

impl BackendGauge {
    pub(super) fn new() -> Self {
        let gauge = IntGaugeVec::new(
            Opts::new(
                "floodgate_backend_up",
                "1 while a configured backend is up (healthy and not ejected), 0 while down.",
            ),
            &["pool", "backend"],
        )
        .expect("static metric definition");
        Self {
            gauge,
            shown: Mutex::new(HashSet::new()),
        }
    }

    pub(super) fn collector(&self) -> Box<dyn prometheus::core::Collector> {
        Box::new(self.gauge.clone())
    }

    /// Shows `(pool, backend, up)` for every configured backend; series of backends no longer
    /// in `states` are removed.
    pub fn show<'a>(&self, states: impl IntoIterator<Item = (&'a str, &'a str, bool)>) {
        let mut now = HashSet::new();
        for (pool, backend, up) in states {
            self.gauge
                .with_label_values(&[pool, backend])
                .set(i64::from(up));
            now.insert((pool.to_owned(), backend.to_owned()));
        }
        let mut shown = self.shown.lock();
        for (pool, backend) in shown.difference(&now) {
            // Only series shown before are removed, so this cannot fail.
            let _ = self.gauge.remove_label_values(&[pool, backend]);
        }
        *shown = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus::core::Collector;

    #[test]
    fn removed_backends_lose_their_series() {
        let gauge = BackendGauge::new();
        let series = |g: &BackendGauge| g.gauge.collect()[0].get_metric().len();
        gauge.show([("default", "a:1", true), ("api", "b:2", false)]);
        assert_eq!(series(&gauge), 2);
        assert_eq!(gauge.gauge.with_label_values(&["default", "a:1"]).get(), 1);
        gauge.show([("default", "a:1", false)]);
        assert_eq!(series(&gauge), 1);
        assert_eq!(gauge.gauge.with_label_values(&["default", "a:1"]).get(), 0);
    }
}
