//! The limiting step: concurrency slots first, then every planned bucket (enforcing and
//! shadow) in one store call, the fallback when the store cannot decide, the counting, the
//! wait of a prepaid request, and the outcome with what later phases owe it.
//!
//! Slots come first so that a request refused for want of one takes no token, and a held
//! request keeps its slot while it waits (`hold.rs` says why it cannot be taken after). A
//! request may so wait up to `max_delay` for a slot and then up to `max_delay` for its tokens.

use super::aftercare::{Aftercare, Settlement};
use super::concurrency::{release_all, HeldSlot, SlotRefusal};
use super::hold::{hold, HeldPermit};
use super::verdict::{busy, unpayable, verdict, Verdict};
use super::{Few, Gate, Outcome, Planned};
use crate::limiter::{Assessment, Assessments, LimiterError, Take, Undecided};
use crate::telemetry::{Decision, HeldResult};
use std::sync::atomic::Ordering;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

impl Gate {
    /// Takes from the planned buckets and says what happens to the request.
    pub(super) async fn check<'g>(&self, planned: &[Planned<'g>]) -> Outcome<'g> {
        if planned.is_empty() {
            return Outcome::Unlimited(Aftercare::default());
        }
        // A request that can never pass takes no slot and no token, and is not told to wait.
        if let Some(i) = planned.iter().position(Planned::unpayable) {
            return unpayable(planned, i);
        }
        let slots = match self.take_slots(planned).await {
            Ok(slots) => slots,
            Err(SlotRefusal::Busy(i)) => return busy(planned, i),
            Err(SlotRefusal::Store) => return undecided(planned, Undecided::Refuse),
        };
        // A place to be held lets a take prepay within `max_delay`; without one it cannot.
        let mut permits: Few<Option<HeldPermit<'g>>> =
            planned.iter().map(|p| p.bound().try_hold()).collect();
        let takes: Few<Take<'g>> = planned
            .iter()
            .zip(&permits)
            .map(|(p, permit)| p.take(permit.is_some()))
            .collect();
        let assessments = match self.ask(&takes).await {
            Ok(assessments) => assessments,
            // Failing open (or closed) drops the slots: nothing is limited or forwarded.
            Err(e) => return undecided(planned, e),
        };
        count_overflow(planned, &assessments, &permits);
        match verdict(planned, &assessments) {
            Verdict::Throttled(decided) => {
                release_all(slots).await;
                Outcome::Throttled(decided)
            }
            Verdict::Allowed(decided) => {
                // Held with its slots: they were taken before the tokens the wait is for.
                hold(planned, &assessments, &mut permits).await;
                drop(permits);
                Outcome::Allowed(decided, self.aftercare(planned, &assessments, slots))
            }
            Verdict::ShadowOnly => Outcome::Unlimited(self.aftercare(planned, &assessments, slots)),
        }
    }

    /// The store's answers for `takes`, or what `on_error` makes of its failure.
    async fn ask(&self, takes: &[Take<'_>]) -> Result<Assessments, Undecided> {
        let started = Instant::now();
        let answer = self.limiter.acquire(takes).await;
        self.counters
            .limiter_seconds
            .observe(started.elapsed().as_secs_f64());
        // One answer per take, or the answer is not believed (a short list must never pass).
        let answer = answer.and_then(|a| match a.len() == takes.len() {
            true => Ok(a),
            false => Err(LimiterError::Store(format!(
                "{} answers for {} takes",
                a.len(),
                takes.len()
            ))),
        });
        match answer {
            Ok(assessments) => Ok(assessments),
            Err(e) => {
                self.log_store_error(&e);
                let decided = self.fallback.decide(takes)?;
                self.counters.store_fallbacks.inc();
                Ok(decided)
            }
        }
    }

    /// What the request owes once forwarded: a settlement for each policy with a settling
    /// rule whose bucket paid, and its slots.
    fn aftercare(
        &self,
        planned: &[Planned<'_>],
        assessments: &[Assessment],
        slots: Few<HeldSlot>,
    ) -> Aftercare {
        let settlements = planned
            .iter()
            .zip(assessments)
            .filter(|(_, a)| a.is_allowed())
            .filter_map(|(p, _)| {
                let rule = p.rules().settle.clone()?;
                let take = p.take(false);
                Some(Settlement {
                    policy: take.key.policy.clone(),
                    identity: take.key.identity,
                    spec: take.spec,
                    reserved: take.cost,
                    rule,
                    counters: p.bound().counters.clone(),
                })
            })
            .collect();
        Aftercare::new(&self.limiter, settlements, slots)
    }

    /// Logs a store error at most once a second: an outage must not flood the log.
    pub(super) fn log_store_error(&self, e: &LimiterError) {
        let now_s = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if self.last_error_log_s.swap(now_s, Ordering::Relaxed) != now_s {
            log::warn!("store cannot decide ({e}); applying on_error");
        }
    }
}

/// The store could not decide: every policy counts an error, and `undecided` applies unless
/// only shadow policies are on the route (they never block).
fn undecided<'g>(planned: &[Planned<'g>], what: Undecided) -> Outcome<'g> {
    planned
        .iter()
        .for_each(|p| p.counters().count(Decision::Error));
    match planned.iter().any(|p| !p.is_shadow()) {
        true => Outcome::Undecided(what),
        false => Outcome::Unlimited(Aftercare::default()),
    }
}

/// Counts the refusals of shaping policies that found every `max_held` place taken.
fn count_overflow(
    planned: &[Planned<'_>],
    assessments: &[Assessment],
    permits: &[Option<HeldPermit<'_>>],
) {
    for ((p, a), permit) in planned.iter().zip(assessments).zip(permits) {
        if !a.is_allowed() && permit.is_none() && p.rules().shaping.is_some() && !p.is_shadow() {
            p.counters().held(HeldResult::Overflow);
        }
    }
}
