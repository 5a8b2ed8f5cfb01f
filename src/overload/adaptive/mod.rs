//! `max_in_flight = "auto"`: a pool's concurrency limit found from its latency, as Envoy's
//! adaptive concurrency filter and Netflix's Gradient2 find it. Answers are judged a window at
//! a time (100 ms and 8 answers at least), by their mean: a backend of N workers given N + 1
//! requests makes one in N + 1 wait, which moves the mean by 1/N and the median not at all. A
//! window within `TOLERANCE` and [`SLACK_US`] of the baseline lets the limit grow (by 10 %, at
//! least 1, and only when the limit was reached in the window: an idle pool proves nothing); a
//! slower window shrinks it by the ratio, at most by half, never below the floor.
//!
//! The baseline is what the backend answers in when nothing queues inside it, over the last
//! ten seconds (a backend that became slower for good is believed within them):
//! - on a quiet proxy host, the lowest window *median*, and a window may stand [`SPREAD`]
//!   standard errors of its mean above it (the spread read from the answers' median absolute
//!   deviation). A backend whose answers spread (20 to 60 ms) has windows whose means differ
//!   by chance; medians move neither for the waiting minority, so queueing cannot excuse
//!   itself and a backend of steady answers is still held at N or N + 1;
//! - on a late host ([`Host::Late`]: it delays and spreads every answer, and its part cannot
//!   be told from the backend's), the lowest single answer, with no allowance for spread: the
//!   limit errs towards fewer requests in flight.
//!
//! An answer slower than [`OUTLIER`] times the lowest median (and [`OUTLIER_SLACK_US`]) is
//! not the pool's pace: a time-out, a URL that hangs, a route whose work is slow. Such answers
//! are left out of their window (a few clients looping on a hanging URL drove the limit from
//! 20 to its floor, a time-out halving it each time), unless they are most of it: then the
//! whole pool is slow, and the window is judged by all its answers (a backend that hangs for
//! everyone still brings the limit to its floor).
//!
//! Pure: time and the host's state are arguments.

use super::lateness::Host;
use std::time::Duration;

/// How much slower than the lowest median a window may be and still count as unqueued: a
/// backend of N workers answering N + 1 requests at once is 1/N slower on average.
const TOLERANCE: f64 = 0.05;
/// Slack on top of the tolerance, in microseconds: a backend answering in a few hundred
/// microseconds jitters by more than 5 % of its lowest answer, and the limit must still grow
/// (its queueing shows as milliseconds).
const SLACK_US: f64 = 1_000.0;
/// How many standard errors of its mean a window may stand above the lowest median by chance
/// (the lowest of a hundred windows' medians is itself about 2.5 below their typical one).
/// The simulated backends (simulated.rs) chose it: at 2 a long-tailed backend is held near
/// the floor, at 4 a widely spread one is given 11 requests for its 8 workers; at 3, 9 to 10.
const SPREAD: f64 = 3.0;
/// A normal spread's standard deviation over its median absolute deviation.
const MAD_TO_SIGMA: f64 = 1.4826;
/// The answers a window keeps to read its median and spread from (the first ones).
const KEPT: usize = 64;
/// How many times the lowest median an answer may take and still show the pool's pace. Our
/// own queueing makes an answer at most about limit ÷ workers rounds slow, and the limit stops
/// growing past workers + 1; a backend slowed down that far makes most answers this slow, and
/// they count again.
const OUTLIER: f64 = 8.0;
/// Slack on top of [`OUTLIER`] times the lowest median, in microseconds: a backend answering in
/// a few hundred microseconds is delayed by the host's scheduling more than that.
const OUTLIER_SLACK_US: f64 = 10_000.0;
/// The shortest window.
const WINDOW_US: u64 = 100_000;
/// The fewest answers a window judges from.
const WINDOW_SAMPLES: u32 = 8;
/// The lowest median is the lowest of this many one-second slots (a backend that became
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
    /// The lowest window median: what a quiet host judges by.
    lowest_median: Lowest,
    /// The lowest single answer: what a late host judges by.
    lowest_answer: Lowest,
}

#[derive(Debug, Clone, Default)]
struct Window {
    started_us: u64,
    /// The answers at the pool's pace.
    samples: u32,
    sum_us: f64,
    /// The first [`KEPT`] answers at the pool's pace, in microseconds.
    kept: Vec<u64>,
    /// The answers past [`OUTLIER`] times the lowest median: their number and sum, and the
    /// first [`KEPT`] of them.
    outliers: u32,
    outliers_sum_us: f64,
    kept_outliers: Vec<u64>,
    /// Whether a request found every slot taken during the window.
    saturated: bool,
}

/// The lowest latency per one-second slot, over the last [`MIN_SLOTS`] slots.
#[derive(Debug, Clone, Default)]
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
            lowest_median: Lowest::default(),
            lowest_answer: Lowest::default(),
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

    /// Takes one answer's `latency` at `now_us`, the proxy `host` as it is now; returns the
    /// new limit when the window that closed changed it.
    pub(super) fn sample(&mut self, now_us: u64, latency: Duration, host: Host) -> Option<u32> {
        let latency_us = latency.as_micros().min(u128::from(u64::MAX)) as u64;
        self.open(now_us);
        self.lowest_answer.record(now_us, latency_us);
        let outlier = self
            .lowest_median
            .get(now_us)
            .is_some_and(|low| latency_us as f64 > low as f64 * OUTLIER + OUTLIER_SLACK_US);
        self.window.take(latency_us, outlier);
        let long_enough = now_us.saturating_sub(self.window.started_us) >= WINDOW_US;
        let answers = self.window.samples + self.window.outliers;
        if !long_enough || answers < WINDOW_SAMPLES.min(self.limit()) {
            return None;
        }
        let before = self.limit();
        self.judge(now_us, host);
        self.window.restart(now_us);
        (self.limit() != before).then_some(self.limit())
    }

    /// Starts the first window at `now_us`.
    fn open(&mut self, now_us: u64) {
        if self.window.samples + self.window.outliers == 0 && !self.window.saturated {
            self.window.started_us = now_us;
        }
    }

    /// The limit after the window that ends at `now_us`.
    fn judge(&mut self, now_us: u64, host: Host) {
        // Answers past the pool's pace are left out, unless they are most of the window.
        if self.window.outliers > self.window.samples {
            self.window.take_outliers();
        }
        let mean = self.window.sum_us / f64::from(self.window.samples.max(1));
        let (median, spread) = self.window.median_and_spread();
        self.lowest_median.record(now_us, median);
        // A late host spreads the answers too, and its part cannot be told from the backend's:
        // then the window is judged by the lowest single answer and allowed no spread (the
        // limit errs low).
        let (lowest, chance) = match host {
            Host::Quiet => (
                self.lowest_median.get(now_us),
                SPREAD * spread / f64::from(self.window.samples).sqrt(),
            ),
            Host::Late => (self.lowest_answer.get(now_us), 0.0),
        };
        let Some(lowest) = lowest else {
            return;
        };
        let mut allowed = lowest as f64 * (1.0 + TOLERANCE) + SLACK_US + chance;
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

impl Window {
    /// Takes one answer, an `outlier` or at the pool's pace.
    fn take(&mut self, latency_us: u64, outlier: bool) {
        let (count, sum, kept) = match outlier {
            true => (
                &mut self.outliers,
                &mut self.outliers_sum_us,
                &mut self.kept_outliers,
            ),
            false => (&mut self.samples, &mut self.sum_us, &mut self.kept),
        };
        *count += 1;
        *sum += latency_us as f64;
        if kept.len() < KEPT {
            kept.push(latency_us);
        }
    }

    /// Counts the outliers with the other answers (most of the window was that slow).
    fn take_outliers(&mut self) {
        self.samples += std::mem::take(&mut self.outliers);
        self.sum_us += std::mem::take(&mut self.outliers_sum_us);
        let room = KEPT.saturating_sub(self.kept.len());
        let n = self.kept_outliers.len().min(room);
        self.kept.extend(self.kept_outliers.drain(..n));
    }

    /// An empty window from `now_us` (keeping its buffer).
    fn restart(&mut self, now_us: u64) {
        let mut kept = std::mem::take(&mut self.kept);
        let mut kept_outliers = std::mem::take(&mut self.kept_outliers);
        kept.clear();
        kept_outliers.clear();
        *self = Window {
            started_us: now_us,
            kept,
            kept_outliers,
            ..Window::default()
        };
    }

    /// The median of the kept answers, and their spread as a standard deviation read from
    /// the median absolute deviation (a minority of slow answers moves neither).
    fn median_and_spread(&mut self) -> (u64, f64) {
        if self.kept.is_empty() {
            return (0, 0.0);
        }
        let middle = (self.kept.len() - 1) / 2;
        let median = *self.kept.select_nth_unstable(middle).1;
        for answer in &mut self.kept {
            *answer = answer.abs_diff(median);
        }
        let deviation = *self.kept.select_nth_unstable(middle).1;
        (median, MAD_TO_SIGMA * deviation as f64)
    }
}

#[cfg(test)]
mod simulated;
#[cfg(test)]
mod tests;
