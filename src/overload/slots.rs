//! One pool's slots: at most `limit` requests at its backends at once. A request that finds
//! them all taken waits in line by priority, first come first served within one; a freed slot
//! goes straight to the highest priority waiting. The line holds `max_queued` requests: a
//! newcomer then takes the place of the newest waiter of a lower priority (never a
//! `critical` one), or is shed itself; a `critical` request always gets in line. A request
//! that waited `queue_time` is shed (by the caller, [`super::PoolGuard`]).

use crate::policy::Priority;
use std::collections::VecDeque;
use tokio::sync::oneshot;

/// Why a request got no slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The line was full of requests of its priority or higher.
    Full,
    /// A request of a higher priority took its place in line.
    Displaced,
    /// No slot freed within `queue_time`.
    Waited,
}

/// Where a request stands after asking for a slot.
#[derive(Debug)]
pub(super) enum Asked {
    /// It has a slot.
    Granted,
    /// It waits in line: the receiver hears `true` when a slot is handed over, or is dropped
    /// (or hears `false`) when the request is displaced.
    Waiting(u64, oneshot::Receiver<bool>),
    /// No slot, no place in line.
    Refused(Refusal),
}

struct Waiter {
    id: u64,
    tell: oneshot::Sender<bool>,
}

/// The slots and the line of one pool (kept under the pool's lock).
pub(super) struct Slots {
    limit: u32,
    in_flight: u32,
    lines: [VecDeque<Waiter>; 4],
    queued: usize,
    next_id: u64,
}

impl Slots {
    /// `limit` slots (at least 1), no one in line.
    pub(super) fn new(limit: u32) -> Self {
        Self {
            limit: limit.max(1),
            in_flight: 0,
            lines: Default::default(),
            queued: 0,
            next_id: 0,
        }
    }

    /// The limit now.
    pub(super) fn limit(&self) -> u32 {
        self.limit
    }

    /// Requests holding a slot.
    pub(super) fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// Requests in line.
    pub(super) fn queued(&self) -> usize {
        self.queued
    }

    /// A slot for a request of `priority`, or its place in a line of at most `max_queued`.
    pub(super) fn ask(&mut self, priority: Priority, max_queued: usize) -> Asked {
        if self.in_flight < self.limit && self.queued == 0 {
            self.in_flight += 1;
            return Asked::Granted;
        }
        let full = self.queued >= max_queued;
        if full && !self.displace_below(priority) && priority != Priority::Critical {
            return Asked::Refused(Refusal::Full);
        }
        let (tell, hear) = oneshot::channel();
        let id = self.next_id;
        self.next_id += 1;
        self.lines[priority.index()].push_back(Waiter { id, tell });
        self.queued += 1;
        Asked::Waiting(id, hear)
    }

    /// Drops the newest waiter of the lowest priority below `priority` (never a critical
    /// one), telling it so; whether there was one.
    fn displace_below(&mut self, priority: Priority) -> bool {
        let lowest = Priority::ALL
            .into_iter()
            .take_while(|p| *p < priority && *p != Priority::Critical)
            .find(|p| !self.lines[p.index()].is_empty());
        let Some(victim) = lowest.and_then(|p| self.lines[p.index()].pop_back()) else {
            return false;
        };
        self.queued -= 1;
        let _ = victim.tell.send(false);
        true
    }

    /// Takes waiter `id` out of line (it stopped waiting); false when it is no longer there
    /// (a slot or a refusal was sent to it meanwhile).
    pub(super) fn leave(&mut self, id: u64) -> bool {
        for line in &mut self.lines {
            if let Some(at) = line.iter().position(|w| w.id == id) {
                line.remove(at);
                self.queued -= 1;
                return true;
            }
        }
        false
    }

    /// A request gave its slot back: it goes to the highest priority waiting (while the
    /// limit allows).
    pub(super) fn release(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.hand_over();
    }

    /// Sets the limit (at least 1); a higher one lets waiters in at once.
    pub(super) fn set_limit(&mut self, limit: u32) {
        self.limit = limit.max(1);
        self.hand_over();
    }

    /// Hands free slots to the waiters, highest priority first.
    fn hand_over(&mut self) {
        while self.in_flight < self.limit {
            let Some(waiter) = self.lines.iter_mut().rev().find_map(VecDeque::pop_front) else {
                return;
            };
            self.queued -= 1;
            // A waiter whose request ended meanwhile does not take the slot.
            if waiter.tell.send(true).is_ok() {
                self.in_flight += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Priority::{Critical, High, Low, Normal};

    fn waiting(asked: Asked) -> (u64, oneshot::Receiver<bool>) {
        match asked {
            Asked::Waiting(id, hear) => (id, hear),
            other => panic!("expected to wait, got {other:?}"),
        }
    }

    #[test]
    fn requests_take_free_slots_then_wait() {
        let mut slots = Slots::new(2);
        assert!(matches!(slots.ask(Normal, 4), Asked::Granted));
        assert!(matches!(slots.ask(Normal, 4), Asked::Granted));
        let (_, mut hear) = waiting(slots.ask(Normal, 4));
        assert_eq!(slots.in_flight(), 2);
        slots.release();
        assert_eq!(hear.try_recv(), Ok(true));
        assert_eq!((slots.in_flight(), slots.queued()), (2, 0));
    }

    #[test]
    fn a_freed_slot_goes_to_the_highest_priority_waiting_first_come_first_served() {
        let mut slots = Slots::new(1);
        assert!(matches!(slots.ask(Low, 8), Asked::Granted));
        let (_, mut low) = waiting(slots.ask(Low, 8));
        let (_, mut high_1) = waiting(slots.ask(High, 8));
        let (_, mut high_2) = waiting(slots.ask(High, 8));
        let (_, mut normal) = waiting(slots.ask(Normal, 8));
        slots.release();
        assert_eq!(high_1.try_recv(), Ok(true));
        assert!(high_2.try_recv().is_err() && normal.try_recv().is_err());
        slots.release();
        assert_eq!(high_2.try_recv(), Ok(true));
        slots.release();
        assert_eq!(normal.try_recv(), Ok(true));
        slots.release();
        assert_eq!(low.try_recv(), Ok(true));
    }

    #[test]
    fn a_full_line_sheds_the_newest_lowest_and_never_a_critical_one() {
        let mut slots = Slots::new(1);
        assert!(matches!(slots.ask(Normal, 2), Asked::Granted));
        let (_, mut old_low) = waiting(slots.ask(Low, 2));
        let (_, mut new_low) = waiting(slots.ask(Low, 2));
        // A `low` newcomer finds no one lower: refused.
        assert!(matches!(slots.ask(Low, 2), Asked::Refused(Refusal::Full)));
        let (_, mut high) = waiting(slots.ask(High, 2));
        assert_eq!(new_low.try_recv(), Ok(false));
        assert!(old_low.try_recv().is_err(), "the oldest low still waits");
        let (_, _critical) = waiting(slots.ask(Critical, 2));
        assert_eq!(old_low.try_recv(), Ok(false));
        let (_, _critical_2) = waiting(slots.ask(Critical, 2));
        assert_eq!(high.try_recv(), Ok(false));
        // Full of critical requests: a high is refused, a critical still gets in line.
        assert!(matches!(slots.ask(High, 2), Asked::Refused(Refusal::Full)));
        let (_, _critical_3) = waiting(slots.ask(Critical, 2));
        assert_eq!(slots.queued(), 3);
    }

    #[test]
    fn a_waiter_that_left_takes_no_slot() {
        let mut slots = Slots::new(1);
        assert!(matches!(slots.ask(Normal, 4), Asked::Granted));
        let (id, hear) = waiting(slots.ask(Normal, 4));
        let (_, mut next) = waiting(slots.ask(Normal, 4));
        drop(hear);
        slots.release();
        assert_eq!(next.try_recv(), Ok(true));
        assert_eq!(slots.in_flight(), 1);
        assert!(!slots.leave(id), "no longer in line");
    }

    #[test]
    fn a_raised_limit_lets_waiters_in_and_a_lowered_one_waits_for_releases() {
        let mut slots = Slots::new(1);
        assert!(matches!(slots.ask(Normal, 4), Asked::Granted));
        let (_, mut a) = waiting(slots.ask(Normal, 4));
        slots.set_limit(3);
        assert_eq!(a.try_recv(), Ok(true));
        assert_eq!(slots.in_flight(), 2);
        slots.set_limit(1);
        let (_, mut b) = waiting(slots.ask(Normal, 4));
        slots.release();
        assert!(b.try_recv().is_err(), "still one over the limit");
        slots.release();
        assert_eq!(b.try_recv(), Ok(true));
    }
}
