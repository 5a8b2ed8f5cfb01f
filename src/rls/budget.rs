//! The store call of one `ShouldRateLimit`, within the service's own budget (`rls.timeout`,
//! below Envoy's timeout): when the store is late, `on_error` decides at once, so Envoy gets
//! this service's answer rather than its own `failure_mode_deny`. The late call is not
//! dropped: it finishes beside, within the store's budget, so its answer is still learned and
//! its failure still counted by the store's breaker (which then skips a paused Redis).

use super::limited::Limited;
use crate::limiter::{
    Assessments, BucketKey, Fallback, Limiter, LimiterError, Mode, Take, Terms, Undecided,
};
use crate::telemetry::Metrics;
use std::sync::Arc;
use std::time::Duration;

/// What the store call is made with.
pub(super) struct Budget<'d> {
    /// Where buckets live.
    pub limiter: &'d Arc<dyn Limiter>,
    /// What decides when the store cannot.
    pub fallback: &'d Fallback,
    /// How long the store may take.
    pub timeout: Duration,
    /// Counts the fallback's decisions.
    pub metrics: &'d Metrics,
}

/// Why the store gave no answer to go by.
#[derive(Debug, thiserror::Error)]
enum Unanswered {
    /// It failed (or its breaker is open).
    #[error("the store failed: {0}")]
    Failed(LimiterError),
    /// It did not answer within the budget.
    #[error("the store did not answer within rls.timeout")]
    Late,
    /// It answered for a different number of takes (never believed).
    #[error("the store answered for another number of descriptors")]
    Short,
}

impl Budget<'_> {
    /// The store's answers for `limited`, or what `on_error` makes of the store's failure.
    pub(super) async fn assess(&self, limited: &Arc<[Limited]>) -> Result<Assessments, Undecided> {
        match self.ask(limited).await {
            Ok(assessments) => Ok(assessments),
            Err(why) => {
                log::debug!("the rate limit service applies on_error: {why}");
                let decided = self.fallback.decide(&takes(limited))?;
                self.metrics.store.fallbacks.inc();
                Ok(decided)
            }
        }
    }

    /// The store's answers, by the budget's end.
    async fn ask(&self, limited: &Arc<[Limited]>) -> Result<Assessments, Unanswered> {
        let (limiter, asked) = (self.limiter.clone(), limited.clone());
        let mut call = Box::pin(async move { limiter.acquire(&takes(&asked)).await });
        let answer = match tokio::time::timeout(self.timeout, &mut call).await {
            Ok(answer) => answer.map_err(Unanswered::Failed)?,
            Err(_) => {
                // The store's own budget still ends it; its answer and failure count there.
                tokio::spawn(call);
                return Err(Unanswered::Late);
            }
        };
        match answer.len() == limited.len() {
            true => Ok(answer),
            false => Err(Unanswered::Short),
        }
    }
}

/// One all-or-nothing take of every limited descriptor's bucket, at its cost.
fn takes(limited: &[Limited]) -> Vec<Take<'_>> {
    limited
        .iter()
        .map(|l| Take {
            key: BucketKey {
                policy: &l.rule.key,
                identity: l.identity,
            },
            spec: l.rule.limits.spec(None, 0),
            cost: l.cost as f64,
            mode: match l.rule.shadow {
                true => Mode::Shadow,
                false => Mode::Enforce,
            },
            terms: Terms::default(),
        })
        .collect()
}
