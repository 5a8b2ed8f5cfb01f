//! `max_delay` end to end: a request held for its own tokens, seed 003's scenario replayed
//! (against a transcription of the seed's own algorithm), and the `max_held` bound.

use crate::common::fleet::{Fleet, Store};
use std::time::{Duration, Instant};

/// `n` requests for `/` at once, from every proxy in turn, one thread each: the status of each
/// and when it ended, in seconds since they were all sent.
fn finished_at_once(fleet: &Fleet, n: usize) -> Vec<(u16, f64)> {
    let sent = Instant::now();
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..n)
            .map(|_| {
                let proxy = fleet.proxy();
                scope.spawn(move || {
                    let status = proxy.get("/", &[]).status().as_u16();
                    (status, sent.elapsed().as_secs_f64())
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("a request thread"))
            .collect()
    })
}

on_every_store!(
    wait_instead_of_refuse,
    seed_003_wait_instead_of_reject,
    held_requests_are_bounded,
);

/// `max_delay`: two back-to-back requests on capacity 1 at 5/s both pass, the second about
/// 200 ms later.
fn wait_instead_of_refuse(store: Store) {
    let policies = r#"
[[policy]]
name = "shaped"
capacity = 1
rate = "5/s"
max_delay = "500ms"
"#;
    let fleet = Fleet::start(store, policies, "");
    assert_eq!(fleet.status("/"), 200);
    let started = Instant::now();
    assert_eq!(fleet.status("/"), 200, "held, then forwarded");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(150) && waited < Duration::from_millis(1000),
        "held about 200 ms: {waited:?}"
    );
    let held = fleet.metric("floodgate_held_total{policy=\"shaped\",result=\"held\"}");
    assert_eq!(held, 1.0);
}

/// Seed 003's algorithm, transcribed from its Lua script (itself Guava's
/// `reserveEarliestAvailable` and `tryAcquire(timeout)`): the wait of each request arriving at
/// `arrivals` (seconds), or `None` when it is refused. A request waits for what the requests
/// before it borrowed, and charges its own shortfall to the next one (本次预支，下次等待); it is
/// refused when that wait would exceed `timeout`. The permits start full, as the seed's script
/// does on a missing key.
fn seed_003_waits(
    permits: f64,
    per_second: f64,
    timeout: f64,
    arrivals: &[f64],
) -> Vec<Option<f64>> {
    let interval = 1.0 / per_second;
    let (mut stored, mut next_free) = (0.0_f64, f64::NEG_INFINITY);
    let mut wait_of = |now: f64| {
        if next_free - now > timeout {
            return None;
        }
        if now > next_free {
            stored = permits.min(stored + (now - next_free) / interval);
            next_free = now;
        }
        let wait = next_free - now;
        let from_store = stored.min(1.0);
        stored -= from_store;
        next_free += (1.0 - from_store) * interval;
        Some(wait)
    };
    arrivals.iter().map(|&now| wait_of(now)).collect()
}

/// The seed's algorithm on its scenario (one permit, two a second, a one-second timeout,
/// requests at once) lets four through, after 0, 0, 0.5 and 1 s, and refuses the fifth.
#[test]
fn seed_003s_own_algorithm_on_its_scenario() {
    let waits = seed_003_waits(1.0, 2.0, 1.0, &[0.0; 5]);
    assert_eq!(waits, [Some(0.0), Some(0.0), Some(0.5), Some(1.0), None]);
}

/// Seed 003's "wait instead of reject" scenario under Floodgate's rule: one token, 2/s,
/// `max_delay = "1s"`, four requests at once. The seed (previous test) lets all four through
/// after 0, 0, 0.5 and 1 s, because there the request that finds no permit goes at once and the
/// next one pays its wait. In Floodgate each request waits for its own tokens (so the issue's
/// "second request about 200 ms later" holds), so its n-th request leaves when the seed's
/// n+1-th would: three pass after about 0, 0.5 and 1 s, and the fourth, which would wait
/// 1.5 s, is refused at once.
fn seed_003_wait_instead_of_reject(store: Store) {
    let policies = r#"
[[policy]]
name = "guava"
capacity = 1
rate = "2/s"
max_delay = "1s"
"#;
    let fleet = Fleet::start(store, policies, "");
    let answers = finished_at_once(&fleet, 4);
    let ended = |status: u16| -> Vec<f64> {
        let mut times: Vec<f64> = answers
            .iter()
            .filter(|a| a.0 == status)
            .map(|a| a.1)
            .collect();
        times.sort_by(f64::total_cmp);
        times
    };
    let (passed, refused) = (ended(200), ended(429));
    assert_eq!((passed.len(), refused.len()), (3, 1), "{answers:?}");
    assert!(passed[0] < 0.5, "the first passes at once: {passed:?}");
    let seed = seed_003_waits(1.0, 2.0, 1.0, &[0.0; 5]);
    for (n, seed_wait) in seed[1..4].iter().enumerate() {
        let expected = seed_wait.expect("the seed lets its next request through");
        let after_first = passed[n] - passed[0];
        assert!(
            (expected - 0.2..expected + 0.3).contains(&after_first),
            "request {n} {expected} s after the first, as the seed's next one: {passed:?}"
        );
    }
    assert_eq!(seed[4], None, "the seed refuses its fifth request");
    assert!(
        refused[0] < passed[1],
        "a refusal does not wait: {answers:?}"
    );
    let held = fleet.metric("floodgate_held_total{policy=\"guava\",result=\"held\"}");
    assert_eq!(held, 2.0);
}

/// `max_held = 2`: on one instance (the bound is per instance) at most two requests wait. With
/// capacity 1 at 1/s and `max_delay = "5s"`, the first passes, the next two are held about 1
/// and 2 s; a fourth, which could wait 3 s, finds no place: it is refused at once and counted
/// as `overflow`, and the held two pass.
fn held_requests_are_bounded(store: Store) {
    let policies = r#"
[[policy]]
name = "bounded"
capacity = 1
rate = "1/s"
max_delay = "5s"
max_held = 2
"#;
    let fleet = Fleet::start(store, policies, "");
    let proxy = &fleet.proxies[0];
    assert_eq!(proxy.get("/", &[]).status(), 200);
    let started = Instant::now();
    let held_now = || proxy.metric("floodgate_held_requests{policy=\"bounded\"}");
    let waiting: Vec<_> = (1..=2)
        .map(|n| {
            let url = proxy.url("/");
            let request = std::thread::spawn(move || {
                let client = reqwest::blocking::Client::new();
                let resp = client.get(url).timeout(Duration::from_secs(10)).send();
                resp.map(|r| r.status().as_u16())
            });
            while held_now() < f64::from(n) {
                assert!(started.elapsed() < Duration::from_millis(900), "held {n}");
                std::thread::sleep(Duration::from_millis(10));
            }
            request
        })
        .collect();
    let asked = Instant::now();
    let overflow = proxy.get("/", &[]);
    assert_eq!(overflow.status(), 429, "no place to wait");
    assert!(
        asked.elapsed() < Duration::from_millis(400),
        "refused at once"
    );
    assert_eq!(held_now(), 2.0, "asked while both wait");
    for request in waiting {
        assert_eq!(request.join().expect("a held request").ok(), Some(200));
    }
    assert!(
        started.elapsed() >= Duration::from_millis(1800),
        "the second waited ~2 s"
    );
    let held = |result: &str| {
        fleet.metric(&format!(
            "floodgate_held_total{{policy=\"bounded\",result=\"{result}\"}}"
        ))
    };
    assert_eq!((held("held"), held("overflow")), (2.0, 1.0));
    assert_eq!(held_now(), 0.0);
}
