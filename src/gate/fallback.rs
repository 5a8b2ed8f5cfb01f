//! `store.on_error`: what a request gets when the store cannot decide.

use super::{Gate, Planned, Verdict};
use crate::limiter::{Assessments, LimiterError, MemoryStore, Take};
use crate::metrics::Decision;
use crate::respond;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// What to do when the store cannot decide.
pub enum Fallback {
    /// Let the request through, counted as `error`.
    Allow,
    /// Refuse it with 503.
    Deny,
    /// Decide it with these in-memory buckets of the same policies.
    Local(Arc<MemoryStore>),
}

impl Gate {
    /// Applies `store.on_error`: local buckets decide, or the request passes or is refused
    /// without a decision.
    pub(super) fn on_store_error(
        &self,
        e: &LimiterError,
        enforcing: &[&Planned<'_>],
        takes: &[Take<'_>],
    ) -> Result<Assessments, Box<Verdict>> {
        self.log_store_error(e);
        let count_errors = || {
            enforcing
                .iter()
                .for_each(|p| p.bound.counters.count(Decision::Error))
        };
        match &self.fallback {
            Fallback::Local(memory) => {
                self.store_metrics.fallbacks.inc();
                Ok(memory.acquire_now(takes))
            }
            Fallback::Allow => {
                count_errors();
                Err(Box::new(Verdict::pass("store_error")))
            }
            Fallback::Deny => {
                count_errors();
                Err(Box::new(Verdict::refuse(
                    respond::store_unavailable(),
                    "store_unavailable",
                )))
            }
        }
    }

    /// Logs a store error at most once a second: an outage must not flood the log.
    fn log_store_error(&self, e: &LimiterError) {
        let now_s = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if self.last_error_log_s.swap(now_s, Ordering::Relaxed) != now_s {
            log::warn!("store cannot decide ({e}); applying on_error");
        }
    }
}
