//! One policy's series, resolved once per config: its decisions, and what its rules did
//! (settlements, held requests, concurrency refusals, penalties). Counting is an array index
//! and an atomic increment.

use super::vocab::{HeldResult, PenaltyEvent, PolicyOutcome, SettleResult, Vocabulary};
use prometheus::core::Collector;
use prometheus::{IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts};

/// The families every policy's series belong to.
pub(super) struct PolicyFamilies {
    requests: IntCounterVec,
    settles: IntCounterVec,
    held: IntCounterVec,
    held_now: IntGaugeVec,
    in_flight: IntGaugeVec,
    in_flight_refused: IntCounterVec,
    penalties: IntCounterVec,
}

fn counters(name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    IntCounterVec::new(Opts::new(name, help), labels).expect("static metric definition")
}

fn gauges(name: &str, help: &str) -> IntGaugeVec {
    IntGaugeVec::new(Opts::new(name, help), &["policy"]).expect("static metric definition")
}

/// The counter of `policy` for each value of vocabulary `V`.
fn each<V: Vocabulary, const N: usize>(family: &IntCounterVec, policy: &str) -> [IntCounter; N] {
    std::array::from_fn(|i| family.with_label_values(&[policy, V::ALL[i].label()]))
}

impl PolicyFamilies {
    pub(super) fn new() -> Self {
        Self {
            requests: counters(
                "floodgate_requests_total",
                "Requests seen by each policy, by decision.",
                &["policy", "decision"],
            ),
            settles: counters(
                "floodgate_settles_total",
                "Reservations settled by the response (count_status, settle_header), by result.",
                &["policy", "result"],
            ),
            held: counters(
                "floodgate_held_total",
                "Requests held instead of refused (max_delay), and refusals because max_held were already held.",
                &["policy", "result"],
            ),
            held_now: gauges(
                "floodgate_held_requests",
                "Requests being held now under each policy (max_delay), on this instance.",
            ),
            in_flight: gauges(
                "floodgate_in_flight",
                "Concurrency slots (max_in_flight) held now by requests of this instance.",
            ),
            in_flight_refused: counters(
                "floodgate_in_flight_refused_total",
                "Requests refused because the caller had max_in_flight requests under way.",
                &["policy"],
            ),
            penalties: counters(
                "floodgate_penalties_total",
                "Penalty blocks (block_for) started, and requests a standing block refused.",
                &["policy", "event"],
            ),
        }
    }

    pub(super) fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![
            Box::new(self.requests.clone()),
            Box::new(self.settles.clone()),
            Box::new(self.held.clone()),
            Box::new(self.held_now.clone()),
            Box::new(self.in_flight.clone()),
            Box::new(self.in_flight_refused.clone()),
            Box::new(self.penalties.clone()),
        ]
    }

    /// Every policy's requests so far, allowed and throttled (this instance, since it started).
    pub(super) fn tally(&self) -> Vec<(String, [u64; 2])> {
        let mut tally: std::collections::BTreeMap<String, [u64; 2]> = Default::default();
        for family in self.requests.collect() {
            for metric in family.get_metric() {
                let label = |name: &str| {
                    metric
                        .get_label()
                        .iter()
                        .find(|l| l.name() == name)
                        .map(|l| l.value().to_owned())
                };
                let (Some(policy), Some(decision)) = (label("policy"), label("decision")) else {
                    continue;
                };
                let counted = [PolicyOutcome::Allowed, PolicyOutcome::Throttled];
                let Some(slot) = counted.iter().position(|d| d.label() == decision) else {
                    continue;
                };
                tally.entry(policy).or_default()[slot] += metric.get_counter().get_value() as u64;
            }
        }
        tally.into_iter().collect()
    }

    /// The series of policy `name`, created at zero so they show before the first request.
    pub(super) fn policy(&self, name: &str) -> PolicyCounters {
        PolicyCounters {
            by_decision: each::<PolicyOutcome, { PolicyOutcome::COUNT }>(&self.requests, name),
            settles: each::<SettleResult, { SettleResult::COUNT }>(&self.settles, name),
            held: each::<HeldResult, { HeldResult::COUNT }>(&self.held, name),
            held_now: self.held_now.with_label_values(&[name]),
            in_flight: self.in_flight.with_label_values(&[name]),
            in_flight_refused: self.in_flight_refused.with_label_values(&[name]),
            penalties: each::<PenaltyEvent, { PenaltyEvent::COUNT }>(&self.penalties, name),
        }
    }
}

/// One policy's series.
#[derive(Clone)]
pub struct PolicyCounters {
    by_decision: [IntCounter; PolicyOutcome::COUNT],
    settles: [IntCounter; SettleResult::COUNT],
    held: [IntCounter; HeldResult::COUNT],
    /// Requests held now.
    pub held_now: IntGauge,
    /// Concurrency slots held now by this instance's requests.
    pub in_flight: IntGauge,
    /// Requests refused for want of a concurrency slot.
    pub in_flight_refused: IntCounter,
    penalties: [IntCounter; PenaltyEvent::COUNT],
}

impl PolicyCounters {
    /// Counts one request with `decision`.
    pub fn count(&self, decision: PolicyOutcome) {
        self.by_decision[decision as usize].inc();
    }

    /// Counts one settlement with `result`.
    pub fn settled(&self, result: SettleResult) {
        self.settles[result as usize].inc();
    }

    /// Counts one request held, or refused because too many were.
    pub fn held(&self, result: HeldResult) {
        self.held[result as usize].inc();
    }

    /// Counts one penalty event.
    pub fn penalty(&self, event: PenaltyEvent) {
        self.penalties[event as usize].inc();
    }
}
