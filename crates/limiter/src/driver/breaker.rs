//! A circuit breaker that tells a slow Redis from a dead one: it opens when the share of failed
//! calls over a recent window passes a ratio (and enough calls were made to judge), not after a
//! few misses in a row among many good calls. A quiet caller (the rate limit service asked a few
//! times a second) never makes enough calls to judge a ratio: while the window holds too few,
//! a run of failures in a row opens it instead. Open, it skips the store; after a cool-down it
//! lets a trickle of real calls through (half-open), and the first that succeeds closes it.
//! Time is passed in.

use parking_lot::Mutex;
use prometheus::IntGauge;
use std::time::Duration;

/// When the breaker opens and how it recovers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BreakerSettings {
    /// The span failures are counted over.
    pub window: Duration,
    /// Fewest calls in the window before the ratio is judged.
    pub min_calls: u32,
    /// Share of failed calls (0..1] that opens the breaker.
    pub failure_ratio: f64,
    /// Failures in a row that open the breaker while the window holds fewer than `min_calls`.
    pub consecutive_failures: u32,
    /// How long the breaker stays open before real calls probe the store again.
    pub cooldown: Duration,
}

impl Default for BreakerSettings {
    fn default() -> Self {
        Self {
            window: Duration::from_secs(1),
            min_calls: 20,
            failure_ratio: 0.5,
            consecutive_failures: 5,
            cooldown: Duration::from_millis(200),
        }
    }
}

/// What a caller may do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// Call the store.
    Call,
    /// Call the store as a half-open trial: its result decides the breaker's state.
    Trial,
    /// Do not call: the breaker is open.
    Skip,
}

/// Calls and failures over the window, in ten slots.
const SLOTS: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Closed,
    Open { since_us: u64 },
    HalfOpen { next_trial_us: u64 },
}

struct Inner {
    state: State,
    slots: [(u64, u32, u32); SLOTS],
    /// Failures since the last success.
    in_a_row: u32,
}

/// The breaker of one store.
pub struct Breaker {
    inner: Mutex<Inner>,
    settings: BreakerSettings,
    slot_us: u64,
    open_gauge: IntGauge,
}

impl Breaker {
    /// A closed breaker with `settings`, mirrored in `open_gauge` (1 while not closed).
    pub fn new(settings: BreakerSettings, open_gauge: IntGauge) -> Self {
        open_gauge.set(0);
        Self {
            inner: Mutex::new(Inner {
                state: State::Closed,
                slots: [(0, 0, 0); SLOTS],
                in_a_row: 0,
            }),
            slot_us: (settings.window.as_micros() as u64 / SLOTS as u64).max(1),
            settings,
            open_gauge,
        }
    }

    /// Whether a call may go to the store at `now_us`.
    pub fn permit(&self, now_us: u64) -> Permission {
        let mut inner = self.inner.lock();
        let trial_spacing = (self.settings.cooldown.as_micros() as u64 / 4).max(1);
        match inner.state {
            State::Closed => Permission::Call,
            State::Open { since_us } => {
                if now_us.saturating_sub(since_us) < self.settings.cooldown.as_micros() as u64 {
                    return Permission::Skip;
                }
                inner.state = State::HalfOpen {
                    next_trial_us: now_us + trial_spacing,
                };
                Permission::Trial
            }
            State::HalfOpen { next_trial_us } if now_us >= next_trial_us => {
                inner.state = State::HalfOpen {
                    next_trial_us: now_us + trial_spacing,
                };
                Permission::Trial
            }
            State::HalfOpen { .. } => Permission::Skip,
        }
    }

    /// Records a call's result at `now_us`. Returns true when this result opened the breaker.
    pub fn record(&self, now_us: u64, ok: bool, permission: Permission) -> bool {
        let mut inner = self.inner.lock();
        if permission == Permission::Trial {
            return self.end_trial(&mut inner, now_us, ok);
        }
        let epoch = now_us / self.slot_us;
        let slot = &mut inner.slots[(epoch % SLOTS as u64) as usize];
        if slot.0 != epoch {
            *slot = (epoch, 0, 0);
        }
        slot.1 += 1;
        slot.2 += u32::from(!ok);
        inner.in_a_row = match ok {
            true => 0,
            false => inner.in_a_row.saturating_add(1),
        };
        if ok || inner.state != State::Closed {
            return false;
        }
        let tripped = self.trips(&inner, epoch);
        if tripped {
            self.open(&mut inner, now_us);
        }
        tripped
    }

    /// Whether the window ending in slot `epoch` opens the breaker: its failure ratio when it
    /// holds enough calls to judge, else the failures in a row.
    fn trips(&self, inner: &Inner, epoch: u64) -> bool {
        let (calls, failures) = inner
            .slots
            .iter()
            .filter(|s| epoch.saturating_sub(s.0) < SLOTS as u64)
            .fold((0, 0), |(c, f), s| (c + s.1, f + s.2));
        match calls >= self.settings.min_calls {
            true => f64::from(failures) >= self.settings.failure_ratio * f64::from(calls),
            false => inner.in_a_row >= self.settings.consecutive_failures,
        }
    }

    fn end_trial(&self, inner: &mut Inner, now_us: u64, ok: bool) -> bool {
        match ok {
            true => {
                inner.state = State::Closed;
                inner.slots = [(0, 0, 0); SLOTS];
                inner.in_a_row = 0;
                self.open_gauge.set(0);
                false
            }
            false => {
                self.open(inner, now_us);
                false
            }
        }
    }

    fn open(&self, inner: &mut Inner, now_us: u64) {
        inner.state = State::Open { since_us: now_us };
        self.open_gauge.set(1);
    }

    /// Whether the breaker is open or half-open (the store is being skipped or probed).
    pub fn is_open(&self) -> bool {
        self.inner.lock().state != State::Closed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1000;

    fn breaker() -> (Breaker, IntGauge) {
        let gauge = IntGauge::new("g", "g").unwrap();
        (
            Breaker::new(BreakerSettings::default(), gauge.clone()),
            gauge,
        )
    }

    #[test]
    fn a_few_slow_answers_among_many_good_ones_do_not_open_it() {
        let (b, _) = breaker();
        for i in 0..100 {
            b.record(i * MS, i % 10 != 0, Permission::Call);
        }
        assert_eq!(b.permit(100 * MS), Permission::Call);
        assert!(!b.is_open());
    }

    #[test]
    fn a_ratio_is_judged_once_the_window_holds_enough_calls() {
        let (b, _) = breaker();
        // Two failures of every three, never five in a row: 19 calls are too few to judge.
        for i in 0..19 {
            assert!(!b.record(i * MS, i % 3 == 2, Permission::Call), "call {i}");
        }
        assert!(
            b.record(19 * MS, false, Permission::Call),
            "the 20th call judges 14 failures of 20"
        );
        assert_eq!(b.permit(20 * MS), Permission::Skip);
    }

    #[test]
    fn a_quiet_caller_opens_it_on_failures_in_a_row() {
        let (b, gauge) = breaker();
        const S: u64 = 1_000_000;
        // One call a second: the window never holds enough calls to judge a ratio.
        assert!(!b.record(0, true, Permission::Call));
        for i in 1..5 {
            assert!(!b.record(i * S, false, Permission::Call), "failure {i}");
        }
        assert!(
            !b.record(5 * S, true, Permission::Call),
            "a success ends the run"
        );
        for i in 6..10 {
            assert!(!b.record(i * S, false, Permission::Call), "failure {i}");
        }
        assert!(
            b.record(10 * S, false, Permission::Call),
            "the fifth failure in a row opens it"
        );
        assert_eq!(b.permit(10 * S + MS), Permission::Skip);
        assert_eq!(gauge.get(), 1);
    }

    #[test]
    fn a_run_of_failures_among_many_good_calls_does_not_open_it() {
        let (b, _) = breaker();
        for i in 0..100 {
            b.record(i * MS, true, Permission::Call);
        }
        // A stall: the calls in the air all miss their budget at once.
        for i in 0..8 {
            assert!(!b.record(900 * MS + i, false, Permission::Call));
        }
        assert!(!b.is_open(), "8 failures of 108 calls");
    }

    #[test]
    fn failures_age_out_of_the_window() {
        let (b, _) = breaker();
        for i in 0..15 {
            b.record(i * MS, i % 3 == 2, Permission::Call);
        }
        // Two seconds later those failures no longer count.
        for i in 0..15 {
            assert!(!b.record(2000 * MS + i * MS, i % 3 == 2, Permission::Call));
        }
        assert!(!b.is_open());
    }

    #[test]
    fn half_open_lets_a_trickle_through_and_one_success_closes_it() {
        let (b, gauge) = breaker();
        for i in 0..5 {
            b.record(i * MS, false, Permission::Call);
        }
        assert_eq!(gauge.get(), 1);
        assert_eq!(b.permit(100 * MS), Permission::Skip, "cooling down");
        let t = 4 * MS + 200 * MS;
        assert_eq!(b.permit(t), Permission::Trial);
        assert_eq!(b.permit(t + MS), Permission::Skip, "one trial at a time");
        b.record(t + 2 * MS, false, Permission::Trial);
        assert_eq!(
            b.permit(t + 3 * MS),
            Permission::Skip,
            "a failed trial reopens it"
        );
        let later = t + 2 * MS + 200 * MS;
        assert_eq!(b.permit(later), Permission::Trial);
        b.record(later, true, Permission::Trial);
        assert_eq!(b.permit(later + MS), Permission::Call);
        assert_eq!(gauge.get(), 0);
    }
}
