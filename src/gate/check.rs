//! The limiting step: every planned bucket (enforcing and shadow) in one store call, the
//! fallback when the store cannot decide, the counting, and the outcome.

use super::{most_restrictive, Decided, Few, Gate, Outcome, Planned, Standing};
use crate::limiter::{Assessments, LimiterError, Take};
use crate::telemetry::Decision;
use std::sync::atomic::Ordering;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

impl Gate {
    /// Takes from the planned buckets and says what happens to the request.
    pub(super) async fn check<'g>(&self, planned: &[Planned<'g>]) -> Outcome<'g> {
        if planned.is_empty() {
            return Outcome::Unlimited;
        }
        let takes: Few<Take<'g>> = planned.iter().map(Planned::take).collect();
        let started = Instant::now();
        let answer = self.limiter.acquire(&takes).await;
        self.counters
            .limiter_seconds
            .observe(started.elapsed().as_secs_f64());
        let assessments = match answer {
            Ok(assessments) => assessments,
            Err(e) => match self.fall_back(&e, &takes) {
                Ok(assessments) => assessments,
                Err(outcome) => {
                    planned
                        .iter()
                        .for_each(|p| p.counters().count(Decision::Error));
                    // Shadow policies never block, whatever `on_error` says.
                    let enforcing = planned.iter().any(|p| !p.is_shadow());
                    return if enforcing {
                        outcome
                    } else {
                        Outcome::Unlimited
                    };
                }
            },
        };
        decide(planned, &assessments)
    }

    /// Applies `store.on_error` after the store failed with `e`.
    fn fall_back<'g>(
        &self,
        e: &LimiterError,
        takes: &[Take<'_>],
    ) -> Result<Assessments, Outcome<'g>> {
        self.log_store_error(e);
        let decided = self.fallback.decide(takes).map_err(Outcome::Undecided)?;
        self.counters.store_fallbacks.inc();
        Ok(decided)
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

/// Counts each policy's decision and picks the outcome from the store's `assessments`.
fn decide<'g>(planned: &[Planned<'g>], assessments: &Assessments) -> Outcome<'g> {
    let passed = planned
        .iter()
        .zip(assessments)
        .all(|(p, a)| p.is_shadow() || a.allowed);
    let mut enforcing: Few<(Standing<'g>, &Planned<'g>)> = Few::new();
    for (p, a) in planned.iter().zip(assessments) {
        p.counters()
            .count(match (p.is_shadow(), passed, a.allowed) {
                (true, _, true) => Decision::Allowed,
                (true, _, false) => Decision::ShadowThrottled,
                (false, true, _) => Decision::Allowed,
                (false, false, false) => Decision::Throttled,
                (false, false, true) => Decision::ThrottledByOther,
            });
        if !p.is_shadow() {
            enforcing.push((p.standing(*a), p));
        }
    }
    let standings: Few<Standing<'g>> = enforcing.iter().map(|(s, _)| *s).collect();
    let Some(index) = most_restrictive(&standings) else {
        return Outcome::Unlimited;
    };
    let (standing, p) = enforcing[index];
    let decided = Decided {
        standing,
        identity: p.identity(),
    };
    match passed {
        true => Outcome::Allowed(decided),
        false => Outcome::Throttled(decided),
    }
}
