//! The limiting step: concurrency slots first, then every planned bucket (enforcing and
//! shadow) through the pipeline (`pipeline.rs`: one store call, the fallback when the store
//! cannot decide, the judgement and counting), the wait of a prepaid request, and the outcome
//! with what later phases owe it.
//!
//! Slots come first so that a request refused for want of one takes no token, and a held
//! request keeps its slot while it waits (`hold.rs` says why it cannot be taken after). A
//! request may so wait up to `max_delay` for a slot and then up to `max_delay` for its tokens.

use super::aftercare::{Aftercare, Settlement};
use super::concurrency::{release_all, HeldSlot, SlotRefusal};
use super::hold::{hold, HeldPermit};
use super::pipeline::{Admission, Passage, Unadmitted};
use super::trail::Trail;
use super::verdict::{busy, unpayable, verdict, Verdict};
use super::{Few, Gate, Outcome, Planned};
use crate::limiter::{Assessment, Take, Undecided};
use crate::telemetry::HeldResult;

impl Gate {
    /// Takes from the planned buckets and says what happens to the request, noting each
    /// policy's decision on `trail`.
    pub(super) async fn check<'g>(
        &self,
        planned: &[Planned<'g>],
        trail: &mut Trail<'g>,
    ) -> Outcome<'g> {
        if planned.is_empty() {
            return Outcome::Unlimited(Aftercare::default());
        }
        let draws = planned.iter().map(Planned::draw).collect();
        let admission = Slots {
            gate: self,
            planned,
        };
        let (judged, (slots, mut permits)) =
            match self.pipeline.admitting(draws, admission, trail).await {
                Passage::Judged(judged, held) => (judged, held),
                // A request that can never pass takes no slot and no token, and is not told
                // to wait.
                Passage::Unpayable(i) => return unpayable(planned, i),
                Passage::Refused { index, why } => return busy(planned, index, why),
                Passage::Undecided(what) => return Outcome::Undecided(what),
                // Only shadow policies were drawn on: they never block.
                Passage::Spared => return Outcome::Unlimited(Aftercare::default()),
            };
        let assessments = &judged.assessments;
        count_overflow(planned, assessments, &permits);
        match verdict(planned, &judged) {
            Verdict::Throttled(decided) => {
                release_all(slots).await;
                Outcome::Throttled(decided)
            }
            Verdict::Allowed(decided) => {
                // Held with its slots: they were taken before the tokens the wait is for.
                hold(planned, assessments, &mut permits).await;
                drop(permits);
                Outcome::Allowed(decided, self.aftercare(planned, assessments, slots))
            }
            Verdict::ShadowOnly => Outcome::Unlimited(self.aftercare(planned, assessments, slots)),
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
                let take = p.take(false, &self.clock);
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
        Aftercare::new(self.pipeline.limiter(), settlements, slots)
    }
}

/// The gate's admission of a payable request: the concurrency slots of its planned
/// policies (slots come before tokens, so a request refused for want of one takes none), then
/// a place to be held for each shaping one.
struct Slots<'a, 'g> {
    gate: &'a Gate,
    planned: &'a [Planned<'g>],
}

impl<'g> Admission for Slots<'_, 'g> {
    type Held = (Few<HeldSlot>, Few<Option<HeldPermit<'g>>>);
    /// The `max_in_flight` of the policy whose slots the caller all holds.
    type Refusal = u32;

    async fn admit(&mut self) -> Result<Self::Held, Unadmitted<u32>> {
        let slots = match self.gate.take_slots(self.planned).await {
            Ok(slots) => slots,
            Err(SlotRefusal::Busy { index, limit }) => {
                return Err(Unadmitted::Refused { index, why: limit })
            }
            Err(SlotRefusal::Store) => return Err(Unadmitted::Undecided(Undecided::Refuse)),
        };
        // A place to be held lets a take prepay within `max_delay`; without one it cannot.
        let permits = self.planned.iter().map(|p| p.bound().try_hold()).collect();
        Ok((slots, permits))
    }

    fn takes(&self, (_, permits): &Self::Held) -> Few<Take<'_>> {
        self.planned
            .iter()
            .zip(permits)
            .map(|(p, permit)| p.take(permit.is_some(), &self.gate.clock))
            .collect()
    }

    fn refused_before(&self) -> bool {
        false
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
