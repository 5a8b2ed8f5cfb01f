//! One pool watched: its slots (fixed share or adaptive limit), the answers' latency, and
//! whether it is overloaded (a request found every slot taken, or answers came slower than
//! `latency_target`, within the last [`HOLD`]). A [`Permit`] is a slot: given back when the
//! request ends, whatever way it ends.

use super::adaptive::Gradient;
use super::settings::{MaxInFlight, OverloadSettings};
use super::slots::{Asked, Slots};
use crate::limiter::FleetSize;
use crate::policy::Priority;
use crate::telemetry::OverloadMetrics;
use parking_lot::Mutex;
use prometheus::IntGauge;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// The fewest requests that may wait for a pool's slots when `max_queued` is not given (4 ×
/// the limit, or this): an adaptive limit still low at the start must not refuse a handful of
/// requests a fast backend would serve at once.
const DEFAULT_MIN_QUEUED: u32 = 16;

/// How long a pool stays overloaded after the last sign of it.
pub const HOLD: Duration = Duration::from_secs(5);
/// The weight of a new answer in the latency average `latency_target` is compared with.
const AVERAGE_WEIGHT: f64 = 0.1;

/// One pool's watch, kept across reloads (by pool name).
pub struct PoolGuard {
    name: Arc<str>,
    pub(super) state: Mutex<PoolState>,
    fleet: Arc<FleetSize>,
    epoch: Instant,
    gauges: Gauges,
}

struct Gauges {
    in_flight: IntGauge,
    limit: IntGauge,
    queued: IntGauge,
}

pub(super) struct PoolState {
    /// The slots and their line.
    pub(super) slots: Slots,
    settings: Arc<OverloadSettings>,
    adaptive: Option<Gradient>,
    /// The latest sign of overload (µs since the epoch).
    pressed_us: Option<u64>,
    /// The answers' latency, averaged (µs).
    average_us: Option<f64>,
}

impl PoolState {
    fn new(settings: Arc<OverloadSettings>, fleet: u32) -> Self {
        let adaptive = match settings.max_in_flight {
            MaxInFlight::Auto { floor, ceiling } => {
                Some(Gradient::new(floor, ceiling, settings.latency_target))
            }
            MaxInFlight::Fleet(_) => None,
        };
        Self {
            slots: Slots::new(settings.first_limit(fleet)),
            settings,
            adaptive,
            pressed_us: None,
            average_us: None,
        }
    }

    /// The limit the settings ask for now: the fleet share (the fleet may have changed) or
    /// the adaptive limit.
    fn wanted_limit(&self, fleet: u32) -> u32 {
        match (&self.adaptive, self.settings.max_in_flight) {
            (Some(adaptive), _) => adaptive.limit(),
            (None, MaxInFlight::Fleet(total)) => super::settings::share(total, fleet),
            (None, MaxInFlight::Auto { floor, .. }) => floor,
        }
    }

    fn max_queued(&self) -> usize {
        let bound = (self.settings.max_queued)
            .unwrap_or_else(|| (self.slots.limit() * 4).max(DEFAULT_MIN_QUEUED));
        bound as usize
    }
}

impl PoolGuard {
    /// The watch of pool `name` under `settings`.
    pub(super) fn new(
        name: Arc<str>,
        settings: Arc<OverloadSettings>,
        fleet: Arc<FleetSize>,
        metrics: &OverloadMetrics,
    ) -> Self {
        let gauges = Gauges {
            in_flight: metrics.in_flight.with_label_values(&[&name]),
            limit: metrics.limit.with_label_values(&[&name]),
            queued: metrics.queued.with_label_values(&[&name]),
        };
        let state = PoolState::new(settings, fleet.get());
        gauges.limit.set(i64::from(state.slots.limit()));
        Self {
            name,
            state: Mutex::new(state),
            fleet,
            epoch: Instant::now(),
            gauges,
        }
    }

    /// The pool's name.
    pub fn name(&self) -> &Arc<str> {
        &self.name
    }

    /// Takes new `settings` (a reload): a changed `max_in_flight` starts over.
    pub(super) fn configure(&self, settings: Arc<OverloadSettings>) {
        let mut state = self.state.lock();
        if *state.settings == *settings {
            return;
        }
        let mut fresh = PoolState::new(settings, self.fleet.get());
        if state.settings.max_in_flight == fresh.settings.max_in_flight {
            fresh.adaptive = state.adaptive.take();
        }
        let limit = fresh.wanted_limit(self.fleet.get());
        state.settings = fresh.settings;
        state.adaptive = fresh.adaptive;
        state.slots.set_limit(limit);
        self.show(&state);
    }

    fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    /// `Retry-After` of a request shed from this pool, in whole seconds.
    pub fn retry_after_s(&self) -> u64 {
        self.state.lock().settings.retry_after_s()
    }

    /// `(in flight, limit, queued)` now.
    pub fn load(&self) -> (u32, u32, usize) {
        let state = self.state.lock();
        (
            state.slots.in_flight(),
            state.slots.limit(),
            state.slots.queued(),
        )
    }

    /// Whether the pool showed overload within the last [`HOLD`].
    pub fn overloaded(&self) -> bool {
        let now = self.now_us();
        let state = self.state.lock();
        Self::pressed(&state, now)
    }

    /// Whether the latest sign of overload (a request that found every slot taken, an answer
    /// that left the average above `latency_target`) is within [`HOLD`] of `now_us`.
    fn pressed(state: &PoolState, now_us: u64) -> bool {
        state
            .pressed_us
            .is_some_and(|at| now_us.saturating_sub(at) < HOLD.as_micros() as u64)
    }

    /// Asks the slots for a request of `priority`: where it stands, and how long it may wait
    /// in line (`queue_time`). Counts a request that found every slot taken as a sign of
    /// overload ([`PoolGuard::acquire`], in waiting.rs, waits).
    pub(super) fn ask(&self, priority: Priority) -> (Asked, Duration) {
        let now = self.now_us();
        let mut state = self.state.lock();
        self.follow(&mut state);
        let max_queued = state.max_queued();
        let asked = state.slots.ask(priority, max_queued);
        if !matches!(asked, Asked::Granted) {
            state.pressed_us = Some(now);
            if let Some(adaptive) = &mut state.adaptive {
                adaptive.saturated(now);
            }
        }
        self.show(&state);
        (asked, state.settings.queue_time)
    }

    /// Takes the limit the settings ask for now (the fleet may have grown or shrunk since
    /// the last request), so the gauge and `GET /v1/overload` show the limit in force even
    /// when no request comes. Called every refresh interval.
    pub(super) fn retune(&self) {
        let mut state = self.state.lock();
        self.follow(&mut state);
        self.show(&state);
    }

    /// Sets the slots' limit to the one the settings ask for now, if it changed.
    fn follow(&self, state: &mut PoolState) {
        let wanted = state.wanted_limit(self.fleet.get());
        if wanted != state.slots.limit() {
            state.slots.set_limit(wanted);
        }
    }

    pub(super) fn permit(self: &Arc<Self>) -> Permit {
        Permit { pool: self.clone() }
    }

    /// Takes one answer's `latency`.
    fn sample(&self, latency: Duration) {
        let now = self.now_us();
        let mut state = self.state.lock();
        let latency_us = latency.as_micros() as f64;
        state.average_us = Some(match state.average_us {
            Some(average) => average + AVERAGE_WEIGHT * (latency_us - average),
            None => latency_us,
        });
        let slow = (state.settings.latency_target)
            .zip(state.average_us)
            .is_some_and(|(target, average)| average > target.as_micros() as f64);
        if slow {
            state.pressed_us = Some(now);
        }
        let Some(gradient) = state.adaptive.as_mut() else {
            return;
        };
        super::lateness::watch();
        let changed = gradient.sample(now, latency, super::lateness::host());
        if let Some(limit) = changed {
            state.slots.set_limit(limit);
            self.show(&state);
        }
    }

    pub(super) fn release(&self) {
        let mut state = self.state.lock();
        state.slots.release();
        self.show(&state);
    }

    /// Shows the state in the gauges.
    pub(super) fn show(&self, state: &PoolState) {
        self.gauges
            .in_flight
            .set(i64::from(state.slots.in_flight()));
        self.gauges.limit.set(i64::from(state.slots.limit()));
        self.gauges.queued.set(state.slots.queued() as i64);
    }
}

/// A slot at one pool's backends, given back when dropped.
pub struct Permit {
    pool: Arc<PoolGuard>,
}

impl Permit {
    /// Notes how long the backend took to answer (its response head), or to fail by a
    /// time-out: the adaptive limit and `latency_target` learn from it.
    pub fn answered_in(&self, latency: Duration) {
        self.pool.sample(latency);
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.pool.release();
    }
}

#[cfg(test)]
mod tests;
