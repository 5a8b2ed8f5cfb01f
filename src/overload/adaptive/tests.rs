//! The adaptive limit against a model backend whose every answer takes the mean.

use super::*;

const MS: u64 = 1_000;

/// A backend of `workers` answering in `service` ms, `in_flight` requests at once: the
/// mean latency of its answers.
fn latency(workers: u32, service: u64, in_flight: u32) -> Duration {
    let rounds = f64::from(in_flight) / f64::from(workers);
    Duration::from_micros((service as f64 * MS as f64 * rounds.max(1.0)) as u64)
}

/// Drives `gradient` for `seconds` against a saturated backend of `workers`, returning the
/// highest limit reached after the first decrease and the last limit.
fn drive(gradient: &mut Gradient, workers: u32, seconds: u64) -> (u32, u32) {
    let mut now = 0;
    let mut highest_after_settling = 0;
    let mut settled = false;
    while now < seconds * 1_000 * MS {
        now += 5 * MS;
        gradient.saturated(now);
        let before = gradient.limit();
        if let Some(after) = gradient.sample(now, latency(workers, 40, before), Host::Quiet) {
            settled |= after < before;
        }
        if settled {
            highest_after_settling = highest_after_settling.max(gradient.limit());
        }
    }
    (highest_after_settling, gradient.limit())
}

#[test]
fn the_limit_finds_a_fixed_backends_workers_and_holds_near_them() {
    for workers in [4, 8, 20] {
        let mut gradient = Gradient::new(1, 1000, None);
        let (highest, last) = drive(&mut gradient, workers, 20);
        // One over while 1/N is beyond the tolerance (N < 10); wider pools hold within
        // the tolerance and one step.
        let over = if workers < 10 { 1 } else { workers / 5 };
        assert!(
            highest <= workers + over,
            "{workers} workers: reached {highest}"
        );
        assert!(last + 2 >= workers, "{workers} workers: fell to {last}");
    }
}

#[test]
fn a_fast_jittery_backend_lets_the_limit_grow() {
    let mut gradient = Gradient::new(2, 1000, None);
    let mut now = 0;
    for n in 0..200_000u64 {
        now += 50;
        gradient.saturated(now);
        // 80 to 400 µs, whatever the load: a backend far from full.
        let latency = Duration::from_micros(80 + (n * 7919) % 320);
        gradient.sample(now, latency, Host::Quiet);
    }
    assert!(gradient.limit() > 100, "stayed at {}", gradient.limit());
}

#[test]
fn an_idle_pool_does_not_grow() {
    let mut gradient = Gradient::new(2, 100, None);
    for i in 1..1000 {
        gradient.sample(i * 5 * MS, Duration::from_millis(40), Host::Quiet);
    }
    assert_eq!(gradient.limit(), 2);
}

#[test]
fn a_hung_backend_halves_the_limit_but_never_below_the_floor() {
    let mut gradient = Gradient::new(3, 100, None);
    let (_, last) = drive(&mut gradient, 50, 5);
    assert!(last > 20, "grew to {last}");
    let mut now = 10_000 * MS;
    let mut seen = vec![gradient.limit()];
    for _ in 0..200 {
        now += 10 * MS;
        gradient.saturated(now);
        gradient.sample(now, Duration::from_secs(30), Host::Quiet);
        seen.push(gradient.limit());
    }
    assert!(seen.windows(2).all(|w| w[1] >= w[0] / 2));
    assert_eq!(gradient.limit(), 3);
}

#[test]
fn a_latency_target_below_the_backends_pace_keeps_the_floor() {
    let mut gradient = Gradient::new(2, 100, Some(Duration::from_millis(30)));
    let (_, last) = drive(&mut gradient, 50, 5);
    assert_eq!(last, 2);
}

#[test]
fn the_lowest_latency_forgets_after_ten_seconds() {
    let mut lowest = Lowest {
        slots: [None; MIN_SLOTS],
    };
    lowest.record(0, 10);
    lowest.record(5 * SLOT_US, 50);
    assert_eq!(lowest.get(5 * SLOT_US), Some(10));
    assert_eq!(lowest.get(11 * SLOT_US), Some(50));
    assert_eq!(lowest.get(20 * SLOT_US), None);
}

/// Drives `gradient` from `from_us` for `seconds` against a saturated backend of `workers`
/// answering in `service` ms, with one answer of `stray` every `every` ms besides; the lowest
/// limit seen.
fn drive_with_strays(
    gradient: &mut Gradient,
    (workers, service): (u32, u64),
    (stray, every): (Duration, u64),
    from_us: u64,
    seconds: u64,
) -> u32 {
    let mut lowest = gradient.limit();
    let mut now = from_us;
    while now < from_us + seconds * 1_000 * MS {
        now += 5 * MS;
        gradient.saturated(now);
        let limit = gradient.limit();
        gradient.sample(now, latency(workers, service, limit), Host::Quiet);
        if now.is_multiple_of(every * MS) {
            gradient.sample(now, stray, Host::Quiet);
        }
        lowest = lowest.min(gradient.limit());
    }
    lowest
}

#[test]
fn time_outs_beside_ordinary_answers_do_not_bring_the_limit_down() {
    // Issue 82: 4 clients looping on a URL that hangs (a 1 s time-out every 250 ms) beside
    // ordinary load took the limit from 20 to its floor.
    let mut gradient = Gradient::new(2, 1000, None);
    drive(&mut gradient, 8, 10);
    assert!(gradient.limit() >= 7, "settled at {}", gradient.limit());
    let time_out = (Duration::from_secs(1), 250);
    let lowest = drive_with_strays(&mut gradient, (8, 40), time_out, 10_000 * MS, 20);
    assert!(lowest >= 7, "fell to {lowest}");
}

#[test]
fn a_backend_slower_for_good_is_believed_despite_the_outlier_rule() {
    // 40 ms, then 400 ms a request (ten times slower) from the tenth second: every answer is
    // past the old pace, so every window is judged by all of them and the lowest median moves.
    let mut gradient = Gradient::new(2, 1000, None);
    drive(&mut gradient, 8, 10);
    let mut now = 10_000 * MS;
    let mut seen = Vec::new();
    while now < 60_000 * MS {
        now += 5 * MS;
        gradient.saturated(now);
        let limit = gradient.limit();
        gradient.sample(now, latency(8, 400, limit), Host::Quiet);
        if now > 40_000 * MS {
            seen.push(gradient.limit());
        }
    }
    let highest = seen.iter().max().copied().unwrap_or(0);
    let last = gradient.limit();
    assert!(
        highest <= 9 && last + 2 >= 8,
        "reached {highest}, at {last}"
    );
}
