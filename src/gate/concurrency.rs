//! `max_in_flight`: a slot per request under way, per caller and policy, taken before any
//! token (so a refused request costs nothing) and released when the request ends, however it
//! ends. A policy with `max_delay` waits that long for a slot before refusing.

use super::bound::Planned;
use super::{Few, Gate};
use crate::limiter::{Slot, Undecided};
use crate::telemetry::HeldResult;
use prometheus::IntGauge;
use std::time::{Duration, Instant};

/// The longest pause between two attempts at a slot while waiting for one.
const MAX_PAUSE: Duration = Duration::from_millis(50);

/// A slot this instance holds, counted in `floodgate_in_flight` while held.
#[derive(Debug)]
pub(crate) struct HeldSlot {
    slot: Option<Slot>,
    gauge: IntGauge,
}

impl HeldSlot {
    fn new(slot: Slot, gauge: IntGauge) -> Self {
        gauge.inc();
        Self {
            slot: Some(slot),
            gauge,
        }
    }

    /// Gives the slot back now (dropping it gives it back in the background).
    pub(crate) async fn release(mut self) {
        if let Some(slot) = self.slot.take() {
            slot.release().await;
        }
    }
}

impl Drop for HeldSlot {
    fn drop(&mut self) {
        self.gauge.dec();
    }
}

/// Why a request gets no slots.
pub(super) enum SlotRefusal {
    /// The caller holds all `max_in_flight` (`limit`) slots of the planned policy at
    /// `index`.
    Busy {
        /// The policy's position among the planned ones.
        index: usize,
        /// Its `max_in_flight`.
        limit: u32,
    },
    /// The store could not say, and `on_error` refuses.
    Store,
}

/// Gives every slot back now.
pub(super) async fn release_all(slots: Few<HeldSlot>) {
    futures::future::join_all(slots.into_iter().map(HeldSlot::release)).await;
}

impl Gate {
    /// A slot of every planned policy with `max_in_flight`, or none. A shadow policy counts
    /// a refusal but never refuses, and goes without a slot when the store cannot answer; for
    /// an enforcing one that is `on_error`'s to decide.
    pub(super) async fn take_slots(
        &self,
        planned: &[Planned<'_>],
    ) -> Result<Few<HeldSlot>, SlotRefusal> {
        let mut slots = Few::new();
        for (i, p) in planned.iter().enumerate() {
            let Some(limit) = p.rules().max_in_flight else {
                continue;
            };
            match self.slot_for(p, limit).await {
                Ok(Some(slot)) => slots.push(slot),
                Ok(None) => {
                    p.counters().in_flight_refused.inc();
                    if !p.is_shadow() {
                        release_all(slots).await;
                        return Err(SlotRefusal::Busy { index: i, limit });
                    }
                }
                // `on_error = "allow"`: no limit while the store is away; and a shadow policy
                // never blocks, whatever `on_error` says.
                Err(Undecided::Pass) => {}
                Err(Undecided::Refuse) if p.is_shadow() => {}
                Err(Undecided::Refuse) => {
                    release_all(slots).await;
                    return Err(SlotRefusal::Store);
                }
            }
        }
        Ok(slots)
    }

    /// A slot of `p`'s caller; with `max_delay` (and a place to wait), tried again until one
    /// is free or the delay is over.
    async fn slot_for(&self, p: &Planned<'_>, limit: u32) -> Result<Option<HeldSlot>, Undecided> {
        if let Some(slot) = self.try_slot(p, limit).await? {
            return Ok(Some(slot));
        }
        let Some(shaping) = p.rules().shaping.filter(|_| !p.is_shadow()) else {
            return Ok(None);
        };
        let Some(mut permit) = p.bound().try_hold() else {
            p.counters().held(HeldResult::Overflow);
            return Ok(None);
        };
        permit.start_holding();
        let deadline = Instant::now() + shaping.max_delay;
        let mut pause = Duration::from_millis(5);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            tokio::time::sleep(pause.min(left)).await;
            pause = (pause * 2).min(MAX_PAUSE);
            if let Some(slot) = self.try_slot(p, limit).await? {
                p.counters().held(HeldResult::Held);
                return Ok(Some(slot));
            }
        }
    }

    /// One attempt at a slot, from the store or, when it fails, from `on_error`.
    async fn try_slot(&self, p: &Planned<'_>, limit: u32) -> Result<Option<HeldSlot>, Undecided> {
        let slot = match self.in_flight.acquire(p.key(), limit).await {
            Ok(slot) => slot,
            Err(e) => {
                let store = self.pipeline.store();
                store.log_error(&e);
                store.fallback().slot(p.key(), limit)?
            }
        };
        Ok(slot.map(|slot| HeldSlot::new(slot, p.counters().in_flight.clone())))
    }
}

#[cfg(test)]
mod tests;
