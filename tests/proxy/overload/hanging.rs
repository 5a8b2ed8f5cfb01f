//! Issue 82, item 2: 4 clients looping on a URL that never answers (and takes no backend
//! worker), beside ordinary load, must not drive `"auto"` to its floor. Each time-out (1 s,
//! 25 times the backend's pace) used to halve the limit: it fell to 2 and the ordinary callers
//! got 503 while the backend's workers were free. Now answers far slower than the pool's pace
//! are left out of the limit's judgement while they are a minority.

use super::load::client;
use crate::common::capacity::Capacity;
use crate::common::{serial, Proxy};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const WORKERS: usize = 8;
const SERVICE: Duration = Duration::from_millis(40);
const ATTACKERS: usize = 4;
const CALLERS: usize = 16;
/// How long the limit may take to find the workers before it is watched.
const WARM_UP: Duration = Duration::from_secs(2);
const WATCHED: Duration = Duration::from_secs(3);

#[test]
fn a_url_that_hangs_does_not_drive_the_adaptive_limit_to_its_floor() {
    let _alone = serial::alone();
    let backend = Capacity::start(WORKERS, SERVICE);
    let extra = "read_timeout = \"1s\"\n\n[overload]\nmax_in_flight = \"auto\"\n";
    let proxy = Proxy::start(&[&backend.addr], extra);
    let limit = "floodgate_overload_limit{pool=\"default\"}";
    let stop = AtomicBool::new(false);
    let watching = AtomicBool::new(false);
    let (ok, shed) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let seen = std::thread::scope(|scope| {
        for _ in 0..ATTACKERS {
            scope.spawn(|| {
                let client = client();
                while !stop.load(Ordering::Relaxed) {
                    let _ = client.get(proxy.url("/hang")).send();
                }
            });
        }
        for _ in 0..CALLERS {
            scope.spawn(|| {
                let client = client();
                while !stop.load(Ordering::Relaxed) {
                    let sent = client.get(proxy.url("/api/items")).send();
                    let status = sent.map_or(0, |r| r.status().as_u16());
                    if watching.load(Ordering::Relaxed) {
                        let counter = if status == 200 { &ok } else { &shed };
                        counter.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
        std::thread::sleep(WARM_UP);
        watching.store(true, Ordering::Relaxed);
        let started = Instant::now();
        let mut seen = Vec::new();
        while started.elapsed() < WATCHED {
            seen.push(proxy.metric(limit) as u32);
            std::thread::sleep(Duration::from_millis(100));
        }
        watching.store(false, Ordering::Relaxed);
        stop.store(true, Ordering::Relaxed);
        seen
    });
    let mut sorted = seen.clone();
    sorted.sort_unstable();
    let median = sorted[sorted.len() / 2];
    let (ok, shed) = (ok.into_inner(), shed.into_inner());
    eprintln!(
        "a hanging URL beside ordinary load: the limit {seen:?} (median {median}); the callers \
         {ok} × 200 and {shed} other; the backend held at most {}",
        backend.most_held()
    );
    assert!(median >= 6, "the limit fell to {median}: {seen:?}");
    assert!(shed * 20 <= ok + shed, "{shed} of {} not served", ok + shed);
    assert!(
        backend.most_held() <= 2 * WORKERS,
        "held {}",
        backend.most_held()
    );
}
