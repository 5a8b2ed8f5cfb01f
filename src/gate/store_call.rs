//! The one call to the store a decision makes, for every bucket of the request at once, and
//! what `on_error` makes of its failure: the only place that asks the bucket store for a
//! request's decision (the proxy's gate and the rate limit service both ask here).
//!
//! A front door with its own deadline (the rate limit service answers within `rls.timeout`,
//! below Envoy's own) gives the call a budget: when the store is late, `on_error` decides at
//! once. The late call is not dropped: it finishes beside, within the store's own budget, so
//! its answer is still learned and its failure still counted by the store's breaker (which
//! then skips a paused Redis).

use crate::identity::Identity;
use crate::limiter::{
    Assessments, BucketKey, BucketSpec, Fallback, Limiter, LimiterError, Mode, PolicyKey, Take,
    Terms, Undecided,
};
use crate::telemetry::Metrics;
use prometheus::{Histogram, IntCounter};
use std::cell::Cell;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

tokio::task_local! {
    /// When the store call of the decision under way began and ended: set only inside
    /// [`timing_store`], for the caller that draws the call (the proxy's traces).
    static STORE_TIMES: Cell<Option<StoreTimes>>;
}

/// When a decision's store call began and ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreTimes {
    /// When it was asked.
    pub began: Instant,
    /// When its answer (or `on_error`'s) was in.
    pub ended: Instant,
}

/// Runs `decide`, and says when its store call began and ended (`None`: no call was made).
/// The gate's signatures stay as they are: the times go through a task-local.
pub async fn timing_store<F: Future>(decide: F) -> (F::Output, Option<StoreTimes>) {
    let timed = async {
        let decided = decide.await;
        (decided, STORE_TIMES.with(Cell::get))
    };
    STORE_TIMES.scope(Cell::new(None), timed).await
}

/// The store, what decides when it cannot, and the series the call feeds.
pub(super) struct StoreCall {
    limiter: Arc<dyn Limiter>,
    fallback: Fallback,
    /// How long the store may take before `fallback` decides; none: the store's own budget.
    budget: Option<Duration>,
    limiter_seconds: Histogram,
    fallbacks: IntCounter,
    last_error_log_s: AtomicU64,
}

/// Why the store gave no answer to go by.
#[derive(Debug, thiserror::Error)]
pub(super) enum Unanswered {
    /// It failed (or its breaker is open).
    #[error(transparent)]
    Failed(#[from] LimiterError),
    /// It did not answer within the caller's budget.
    #[error("the store did not answer within {0:?}")]
    Late(Duration),
    /// It answered for another number of takes (a short list must never pass).
    #[error("{answers} answers for {takes} takes")]
    Short {
        /// Answers received.
        answers: usize,
        /// Takes asked.
        takes: usize,
    },
}

impl StoreCall {
    /// Calls to `limiter`, `fallback` deciding when it cannot, counted in `metrics`.
    pub(super) fn new(limiter: Arc<dyn Limiter>, fallback: Fallback, metrics: &Metrics) -> Self {
        Self {
            limiter,
            fallback,
            budget: None,
            limiter_seconds: metrics.limiter_seconds.clone(),
            fallbacks: metrics.store.fallbacks.clone(),
            last_error_log_s: AtomicU64::new(0),
        }
    }

    /// The same calls, `fallback` deciding once the store has taken `budget`.
    pub(super) fn within(self, budget: Duration) -> Self {
        Self {
            budget: Some(budget),
            ..self
        }
    }

    /// The store.
    pub(super) fn limiter(&self) -> &Arc<dyn Limiter> {
        &self.limiter
    }

    /// What decides when the store cannot.
    pub(super) fn fallback(&self) -> &Fallback {
        &self.fallback
    }

    /// The store's answers for `takes` (one all-or-nothing call), or what `on_error` makes of
    /// its failure.
    pub(super) async fn ask(&self, takes: &[Take<'_>]) -> Result<Assessments, Undecided> {
        let started = Instant::now();
        let answer = self.acquire(takes).await;
        let ended = Instant::now();
        self.limiter_seconds
            .observe((ended - started).as_secs_f64());
        let times = StoreTimes {
            began: started,
            ended,
        };
        // Outside `timing_store` there is nowhere to note them, and nothing to do.
        let _ = STORE_TIMES.try_with(|cell| cell.set(Some(times)));
        // One answer per take, or the answer is not believed.
        let answer = answer.and_then(|a| match a.len() == takes.len() {
            true => Ok(a),
            false => Err(Unanswered::Short {
                answers: a.len(),
                takes: takes.len(),
            }),
        });
        match answer {
            Ok(assessments) => Ok(assessments),
            Err(why) => {
                self.log_error(&why);
                let decided = self.fallback.decide(takes)?;
                self.fallbacks.inc();
                Ok(decided)
            }
        }
    }

    /// The store's answer, by the budget's end if there is one.
    async fn acquire(&self, takes: &[Take<'_>]) -> Result<Assessments, Unanswered> {
        if let Some(answer) = self.limiter.acquire_at_hand(takes) {
            return Ok(answer?);
        }
        let Some(budget) = self.budget else {
            return Ok(self.limiter.acquire(takes).await?);
        };
        let (limiter, kept) = (self.limiter.clone(), kept(takes));
        let mut call = Box::pin(async move { limiter.acquire(&kept.takes()).await });
        match tokio::time::timeout(budget, &mut call).await {
            Ok(answer) => Ok(answer?),
            Err(_) => {
                // The store's own budget still ends it; its answer and failure count there.
                tokio::spawn(call);
                Err(Unanswered::Late(budget))
            }
        }
    }

    /// Logs a store error at most once a second: an outage must not flood the log.
    pub(super) fn log_error(&self, why: &dyn std::fmt::Display) {
        let now_s = crate::clock::monotonic_s();
        if self.last_error_log_s.swap(now_s, Ordering::Relaxed) != now_s {
            log::warn!("store cannot decide ({why}); applying on_error");
        }
    }
}

/// Takes owned by a call that may outlive its request.
struct Kept(Vec<(PolicyKey, Identity, BucketSpec, f64, Mode, Terms)>);

fn kept(takes: &[Take<'_>]) -> Kept {
    Kept(
        takes
            .iter()
            .map(|t| {
                let policy = t.key.policy.clone();
                (policy, t.key.identity, t.spec, t.cost, t.mode, t.terms)
            })
            .collect(),
    )
}

impl Kept {
    fn takes(&self) -> Vec<Take<'_>> {
        self.0
            .iter()
            .map(|(policy, identity, spec, cost, mode, terms)| Take {
                key: BucketKey {
                    policy,
                    identity: *identity,
                },
                spec: *spec,
                cost: *cost,
                mode: *mode,
                terms: *terms,
            })
            .collect()
    }
}
