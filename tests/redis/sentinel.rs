//! Redis behind Sentinel, with real sentinels: three proxies under load from one caller
//! through a planned failover (`SENTINEL FAILOVER`) and through the master's SIGKILL; and a
//! proxy pointed straight at a replica, whose `/readyz` must not claim it can decide.

use crate::common;

use common::load::hammer;
use common::sentinel::{SentinelSetup, MASTER};
use common::{Proxy, Upstream};
use std::time::{Duration, Instant};

const CAPACITY: f64 = 20.0;
const RATE: f64 = 50.0;

fn sentinel_store(setup: &SentinelSetup) -> String {
    let urls: Vec<String> = setup.urls().iter().map(|u| format!("\"{u}\"")).collect();
    format!(
        "[store]\nkind = \"redis\"\nsentinels = [{}]\nsentinel_master = \"{MASTER}\"\n\n\
         [identity]\nsources = [\"header:x-api-key\"]\n\n\
         [[policy]]\nname = \"per-key\"\ncapacity = {CAPACITY}\nrate = \"{RATE}/s\"\n",
        urls.join(", ")
    )
}

/// Three proxies on the sentinels, loaded for `seconds` from one caller while `event` runs
/// one second in; asserts no request failed and returns (allowed, the exact bucket).
fn through(seconds: u64, event: impl FnOnce(&mut SentinelSetup) + Send) -> (f64, f64) {
    let mut setup = SentinelSetup::start();
    let upstream = Upstream::start();
    let config = sentinel_store(&setup);
    let proxies: Vec<Proxy> = (0..3)
        .map(|_| Proxy::start(&[&upstream.addr], &config))
        .collect();
    let urls: Vec<String> = proxies.iter().map(|p| p.url("/")).collect();
    let setup_ref = &mut setup;
    let report = std::thread::scope(|scope| {
        let load = scope.spawn(|| {
            hammer(
                &urls,
                1,
                Duration::from_secs(seconds),
                Duration::from_millis(2),
                &[("x-api-key", "k")],
            )
        });
        std::thread::sleep(Duration::from_secs(1));
        event(setup_ref);
        load.join().expect("load")
    });
    eprintln!(
        "{:?}, max latency {:?}",
        report.statuses,
        report.max_latency()
    );
    assert_eq!(
        report.count(200) + report.count(429),
        report.total(),
        "no request failed: {:?}",
        report.statuses
    );
    (report.count(200) as f64, CAPACITY + RATE * report.span())
}

#[test]
fn a_planned_failover_fails_no_request_and_stays_within_five_percent_of_exact() {
    let (allowed, exact) = through(6, |setup| {
        let before = setup.master_port();
        let _: String = redis::cmd("SENTINEL")
            .arg("FAILOVER")
            .arg(MASTER)
            .query(&mut setup.sentinel(0))
            .expect("a failover starts");
        let started = Instant::now();
        while setup.master_port() == before {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the failover never happened"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    eprintln!("allowed {allowed}, exact {exact:.1}");
    assert!(
        allowed <= 1.05 * exact,
        "admitted {allowed} > 1.05 × {exact:.1}"
    );
    assert!(
        allowed >= 0.9 * exact,
        "admitted {allowed}: limiting did not go on"
    );
}

#[test]
fn a_killed_master_fails_no_request_and_the_new_master_decides_soon() {
    let resumed = std::sync::Mutex::new(None);
    let (allowed, exact) = through(8, |setup| {
        let replica_calls = setup.replica.script_calls();
        setup.master.kill();
        let killed = Instant::now();
        while setup.replica.script_calls() == replica_calls {
            assert!(
                killed.elapsed() < Duration::from_secs(10),
                "no new master took the calls"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        *resumed.lock().unwrap() = Some(killed.elapsed());
    });
    let resumed = resumed.into_inner().unwrap().expect("measured");
    eprintln!(
        "allowed {allowed}, exact {exact:.1}; the new master decided {resumed:?} after the kill"
    );
    assert!(
        resumed <= Duration::from_millis(1000 + 3000),
        "decisions on the new master {resumed:?} after the kill (down-after is 1 s)"
    );
}

#[test]
fn a_proxy_pointed_at_a_replica_reports_degraded() {
    let setup = SentinelSetup::start();
    let upstream = Upstream::start();
    for (on_error, status, says) in [
        ("local", 200, "ready, degraded"),
        ("deny", 503, "not ready"),
    ] {
        let config = format!(
            "[store]\nkind = \"redis\"\nurl = \"{}\"\non_error = \"{on_error}\"\n\n\
             [[policy]]\nname = \"p\"\ncapacity = 5\nrate = \"1/s\"\n",
            setup.replica.url()
        );
        let proxy = Proxy::start(&[&upstream.addr], &config);
        let response = proxy.admin("/readyz").expect("readyz");
        assert_eq!(response.status(), status);
        let body = response.text().unwrap();
        assert!(
            body.starts_with(says) && body.contains("read-only"),
            "{body}"
        );
        // A request's error is logged once, its cause named once.
        proxy.get("/x", &[]);
        let log = proxy.log();
        assert!(log.contains("the store failed: "), "{log}");
        assert!(!log.contains("the store failed: the store failed"), "{log}");
    }
}
