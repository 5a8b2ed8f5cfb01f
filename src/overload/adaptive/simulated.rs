//! The adaptive limit against a simulated backend: `workers` serving one request each, first
//! come first served, each answer taking its own time, and always more requests than the
//! limit lets through (the pool is saturated). Unlike tests.rs's model (every answer at the
//! mean), a ninth request on 8 workers waits a whole round here, as it does in a real one.
//! The time is the simulation's: nothing sleeps.

use super::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const MS: u64 = 1_000;

/// A backend of `workers`, each request taking `service(n)` µs for the n-th request.
struct Backend<F: FnMut(u64) -> u64> {
    /// When each worker is free again.
    free_at: BinaryHeap<Reverse<u64>>,
    service: F,
    sent: u64,
    /// The most requests inside at once (served or waiting).
    most_held: u32,
    /// (answered at, sent at) of every request inside.
    inside: BinaryHeap<Reverse<(u64, u64)>>,
}

impl<F: FnMut(u64) -> u64> Backend<F> {
    fn new(workers: u32, service: F) -> Self {
        Self {
            free_at: (0..workers).map(|_| Reverse(0)).collect(),
            service,
            sent: 0,
            most_held: 0,
            inside: BinaryHeap::new(),
        }
    }

    /// Sends a request at `now`: it waits for the first free worker.
    fn send(&mut self, now: u64) {
        let Reverse(free) = self.free_at.pop().expect("a worker");
        let answered = now.max(free) + (self.service)(self.sent);
        self.sent += 1;
        self.free_at.push(Reverse(answered));
        self.inside.push(Reverse((answered, now)));
        self.most_held = self.most_held.max(self.inside.len() as u32);
    }

    /// The next answer: when it came and how long it took.
    fn answer(&mut self) -> Option<(u64, Duration)> {
        let Reverse((answered, sent)) = self.inside.pop()?;
        Some((answered, Duration::from_micros(answered - sent)))
    }
}

/// A proxy host that delays each answer by `delay(n)` µs, and how it reads itself.
struct Proxy<D: FnMut(u64) -> u64> {
    delay: D,
    host: Host,
}

/// A host that delays nothing.
fn idle() -> Proxy<fn(u64) -> u64> {
    Proxy {
        delay: |_| 0,
        host: Host::Quiet,
    }
}

/// Drives `gradient` for `seconds` against `backend` behind `host`, always at its limit; the
/// limits seen after the first `settle` seconds.
fn drive<F: FnMut(u64) -> u64, D: FnMut(u64) -> u64>(
    gradient: &mut Gradient,
    backend: &mut Backend<F>,
    host: &mut Proxy<D>,
    seconds: u64,
    settle: u64,
) -> Vec<u32> {
    let mut seen = Vec::new();
    for _ in 0..gradient.limit() {
        backend.send(0);
    }
    let mut n = 0;
    while let Some((now, latency)) = backend.answer() {
        if now > seconds * 1_000 * MS {
            break;
        }
        n += 1;
        let noticed = latency + Duration::from_micros((host.delay)(n));
        gradient.saturated(now);
        gradient.sample(now, noticed, host.host);
        while (backend.inside.len() as u32) < gradient.limit() {
            backend.send(now);
        }
        if now > settle * 1_000 * MS {
            seen.push(gradient.limit());
        }
    }
    seen
}

/// A spread of `low..=high` µs, different for each `n` (a multiplicative hash, not a clock).
fn spread(low: u64, high: u64) -> impl FnMut(u64) -> u64 {
    move |n| low + n.wrapping_mul(2_654_435_761) % (high - low + 1)
}

/// `low` µs plus a long tail of mean `tail` µs (exponential), different for each `n`.
fn tailed(low: u64, tail: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        let unit = (n.wrapping_mul(2_654_435_761) % 1_000_000 + 1) as f64 / 1_000_001.0;
        low + (-(unit.ln()) * tail as f64) as u64
    }
}

fn median(mut seen: Vec<u32>) -> u32 {
    seen.sort_unstable();
    seen[seen.len() / 2]
}

#[test]
fn a_backend_of_steady_answers_is_found_and_held_near_its_workers() {
    let mut gradient = Gradient::new(2, 1000, None);
    let mut backend = Backend::new(8, |_| 40 * MS);
    let seen = drive(&mut gradient, &mut backend, &mut idle(), 20, 5);
    assert!(backend.most_held <= 9, "held {}", backend.most_held);
    assert!(median(seen) >= 7);
}

/// The typical limit over 20 s, after 10, against 8 workers answering in `service` behind an
/// idle host, and the most the backend held.
fn settled(service: impl FnMut(u64) -> u64) -> (u32, u32) {
    let mut gradient = Gradient::new(2, 1000, None);
    let mut backend = Backend::new(8, service);
    let seen = drive(&mut gradient, &mut backend, &mut idle(), 30, 10);
    (median(seen), backend.most_held)
}

#[test]
fn a_backend_whose_answers_spread_widely_is_found_and_not_flooded() {
    // 20 to 60 ms a request: the lowest answer is half the mean (the rule before held such a
    // backend at the floor).
    let (typical, held) = settled(spread(20 * MS, 60 * MS));
    assert!((7..=12).contains(&typical), "limit {typical}");
    assert!(held <= 14, "held {held}");
}

#[test]
fn a_backend_with_a_long_tail_is_found_and_not_flooded() {
    // 20 ms and a tail of 20 ms on average: the mean (40 ms) well above the median (34 ms).
    let (typical, held) = settled(tailed(20 * MS, 20 * MS));
    assert!((6..=12).contains(&typical), "limit {typical}");
    assert!(held <= 14, "held {held}");
}

#[test]
fn a_busy_host_spreading_steady_answers_is_not_taken_for_the_backend() {
    // The backend answers in 40 ms; the host wakes each answer 0 to 10 ms late, and knows it
    // is late.
    let mut gradient = Gradient::new(2, 1000, None);
    let mut backend = Backend::new(8, |_| 40 * MS);
    let mut host = Proxy {
        delay: spread(0, 10 * MS),
        host: Host::Late,
    };
    drive(&mut gradient, &mut backend, &mut host, 30, 10);
    assert!(backend.most_held <= 9, "held {}", backend.most_held);
}

#[test]
fn a_fast_backend_of_many_workers_is_given_many_requests() {
    // 100 to 400 µs a request, 64 workers: nginx serving a small file.
    let mut gradient = Gradient::new(2, 1000, None);
    let mut backend = Backend::new(64, spread(100, 400));
    let seen = drive(&mut gradient, &mut backend, &mut idle(), 10, 5);
    let typical = median(seen);
    assert!(typical >= 48, "limit {typical}");
}
