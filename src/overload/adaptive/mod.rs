//! `max_in_flight = "auto"`: a pool's concurrency limit found from its latency, as Envoy's
//! adaptive concurrency filter and Netflix's Gradient2 find it. The lowest latency of the last
//! ten seconds is what the backend answers in when nothing queues inside it; a window of
//! answers whose mean latency stays within `TOLERANCE` of it lets the limit grow (by 10 %, at
//! least 1, and only when the limit was reached in the window: an idle pool proves nothing),
//! a slower window shrinks it by the ratio, at most by half, never below the floor. The mean,
//! not the median: a backend of N workers given N + 1 requests makes one in N + 1 wait, which
//! moves the mean by 1/N and the median not at all. A proxy host busy enough to delay most
//! answers keeps the limit low: it errs towards fewer requests in flight. A backend that
//! became slower for good is believed within ten seconds. Pure: time is an argument, in
//! microseconds.

use std::time::Duration;

/// How much slower than the lowest latency a window may be and still count as unqueued: a
/// backend of N workers answering N + 1 requests at once is 1/N slower on average.
const TOLERANCE: f64 = 0.05;
/// Slack on top of the tolerance, in microseconds: a backend answering in a few hundred
/// microseconds jitters by more than 5 % of its lowest answer, and the limit must still grow
/// (its queueing shows as milliseconds).
const SLACK_US: f64 = 1_000.0;
/// The shortest window.
const WINDOW_US: u64 = 100_000;
/// The fewest answers a window judges from.
const WINDOW_SAMPLES: u32 = 8;
/// The lowest latency is the lowest of this many one-second slots (a backend that became
/// slower for good is believed within ten seconds).
const MIN_SLOTS: usize = 10;
const SLOT_US: u64 = 1_000_000;

/// The adaptive limit of one pool.
#[derive(Debug, Clone)]
pub(super) struct Gradient {
    limit: f64,
    floor: u32,
    ceiling: u32,
    /// `latency_target`, in microseconds: a window slower than this shrinks the limit
    /// whatever the lowest latency.
    target_us: Option<f64>,
    window: Window,
    lowest: Lowest,
}

#[derive(Debug, Clone, Default)]
struct Window {
    started_us: u64,
    samples: u32,
    sum_us: f64,
    /// Whether a request found every slot taken during the window.
    saturated: bool,
}

/// The lowest latency per one-second slot, over the last [`MIN_SLOTS`] slots.
#[derive(Debug, Clone)]
struct Lowest {
    slots: [Option<(u64, u64)>; MIN_SLOTS],
}

impl Lowest {
    fn record(&mut self, now_us: u64, latency_us: u64) {
        let second = now_us / SLOT_US;
        let slot = &mut self.slots[(second % MIN_SLOTS as u64) as usize];
        *slot = match *slot {
            Some((s, low)) if s == second => Some((s, low.min(latency_us))),
            _ => Some((second, latency_us)),
        };
    }

    fn get(&self, now_us: u64) -> Option<u64> {
        let second = now_us / SLOT_US;
        self.slots
            .iter()
            .flatten()
            .filter(|(s, _)| second.saturating_sub(*s) < MIN_SLOTS as u64)
            .map(|&(_, low)| low)
            .min()
    }
}

impl Gradient {
    /// A limit between `floor` and `ceiling` (both at least 1), starting at the floor;
    /// windows slower than `target` (when given) shrink it.
    pub(super) fn new(floor: u32, ceiling: u32, target: Option<Duration>) -> Self {
        let floor = floor.max(1);
        Self {
            limit: f64::from(floor),
            floor,
            ceiling: ceiling.max(floor),
            target_us: target.map(|t| t.as_micros() as f64),
            window: Window::default(),
            lowest: Lowest {
                slots: [None; MIN_SLOTS],
            },
        }
    }

    /// The limit now.
    pub(super) fn limit(&self) -> u32 {
        self.limit as u32
    }

    /// Notes that a request found every slot taken at `now_us`.
    pub(super) fn saturated(&mut self, now_us: u64) {
        self.open(now_us);
        self.window.saturated = true;
    }

    /// Takes one answer's `latency` at `now_us`; returns the new limit when the window that
    /// closed changed it.
    pub(super) fn sample(&mut self, now_us: u64, latency: Duration) -> Option<u32> {
        let latency_us = latency.as_micros().min(u128::from(u64::MAX)) as u64;
        self.open(now_us);
        self.lowest.record(now_us, latency_us);
        self.window.samples += 1;
        self.window.sum_us += latency_us as f64;
        let long_enough = now_us.saturating_sub(self.window.started_us) >= WINDOW_US;
        if !long_enough || self.window.samples < WINDOW_SAMPLES.min(self.limit()) {
            return None;
        }
        let before = self.limit();
        self.judge(now_us);
        self.window = Window {
            started_us: now_us,
            ..Window::default()
        };
        (self.limit() != before).then_some(self.limit())
    }

    /// Starts the first window at `now_us`.
    fn open(&mut self, now_us: u64) {
        if self.window.samples == 0 && !self.window.saturated {
            self.window.started_us = now_us;
        }
    }

    /// The limit after the window that ends at `now_us`.
    fn judge(&mut self, now_us: u64) {
        let Some(lowest) = self.lowest.get(now_us) else {
            return;
        };
        let mean = self.window.sum_us / f64::from(self.window.samples);
        let mut allowed = lowest as f64 * (1.0 + TOLERANCE) + SLACK_US;
        if let Some(target) = self.target_us {
            allowed = allowed.min(target);
        }
        let (floor, ceiling) = (f64::from(self.floor), f64::from(self.ceiling));
        if mean > allowed {
            let gradient = (allowed / mean).max(0.5);
            self.limit = (self.limit * gradient).floor().max(floor);
        } else if self.window.saturated {
            self.limit = (self.limit + (self.limit * 0.1).max(1.0))
                .floor()
                .min(ceiling);
        }
    }
}

#[cfg(test)]
mod simulated;
#[cfg(test)]
mod tests;
