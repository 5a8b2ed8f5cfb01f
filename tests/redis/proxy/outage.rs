//! Redis away: killed under load with each `on_error` choice, and absent at start; what
//! the clients get, how soon limiting resumes, and what `/readyz` says meanwhile.

use super::{keyed_policy, redis_store};
use crate::common::load::{hammer, LoadReport};
use crate::common::redis::RedisServer;
use crate::common::{self, Proxy, Upstream};
use std::time::{Duration, Instant};

/// Kills Redis one second into a four-second load and restarts it 1.5 s later. Returns the
/// load report and how long after the restart the proxy wrote to Redis again.
fn outage(on_error: &str) -> (LoadReport, Duration, Proxy) {
    let mut redis = RedisServer::start();
    let upstream = Upstream::start();
    let store = format!("on_error = \"{on_error}\"");
    let config = redis_store(&redis, &store) + &keyed_policy("roomy", 100_000, "100000/s", "");
    let proxy = Proxy::start(&[&upstream.addr], &config);
    let url = proxy.url("/");
    let (report, recovery) = std::thread::scope(|scope| {
        let load = scope.spawn(|| {
            hammer(
                std::slice::from_ref(&url),
                3,
                Duration::from_secs(4),
                Duration::from_millis(2),
                &[("x-api-key", "u")],
            )
        });
        std::thread::sleep(Duration::from_secs(1));
        redis.kill();
        std::thread::sleep(Duration::from_millis(1500));
        redis.restart();
        let back = Instant::now();
        let mut conn = redis.conn();
        let buckets = |conn: &mut redis::Connection| -> usize {
            let keys: Vec<String> = redis::cmd("KEYS")
                .arg(crate::common::redis::BUCKET_KEYS)
                .query(conn)
                .unwrap_or_default();
            keys.len()
        };
        while buckets(&mut conn) == 0 {
            assert!(
                back.elapsed() < Duration::from_secs(10),
                "limiting never resumed"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let recovery = back.elapsed();
        (load.join().expect("load"), recovery)
    });
    eprintln!(
        "on_error={on_error}: {:?}, p99 {:?}, max {:?}, resumed {:?} after the restart",
        report.statuses,
        report.quantile(0.99),
        report.max_latency(),
        recovery
    );
    assert!(
        recovery < Duration::from_millis(1500),
        "limiting resumed after {recovery:?}"
    );
    (report, recovery, proxy)
}

#[test]
fn redis_killed_under_load_with_allow_fails_no_request() {
    let (report, _, proxy) = outage("allow");
    assert_eq!(report.count(200), report.total(), "{:?}", report.statuses);
    assert!(
        report.max_latency() < Duration::from_secs(1),
        "max {:?}",
        report.max_latency()
    );
    assert!(proxy.metric("floodgate_requests_total{decision=\"error\",policy=\"roomy\"}") > 0.0);
}

#[test]
fn redis_killed_under_load_with_local_fails_no_request() {
    let (report, _, proxy) = outage("local");
    assert_eq!(report.count(200), report.total(), "{:?}", report.statuses);
    assert!(
        report.max_latency() < Duration::from_secs(1),
        "max {:?}",
        report.max_latency()
    );
    assert!(proxy.metric("floodgate_store_fallback_total") > 0.0);
}

#[test]
fn redis_killed_under_load_with_deny_answers_503() {
    let (report, _, _proxy) = outage("deny");
    assert!(report.count(503) > 0, "{:?}", report.statuses);
    assert_eq!(
        report.count(200) + report.count(503),
        report.total(),
        "{:?}",
        report.statuses
    );
    let last_503 = report
        .timeline
        .iter()
        .filter(|(_, s)| *s == 503)
        .map(|(t, _)| *t)
        .fold(0.0, f64::max);
    let first_503 = report
        .timeline
        .iter()
        .filter(|(_, s)| *s == 503)
        .map(|(t, _)| *t)
        .fold(9.0, f64::min);
    assert!(
        first_503 >= 0.9 && last_503 <= 4.0,
        "503s only during the outage: {first_503}..{last_503}"
    );
}

#[test]
fn readyz_follows_redis_health_and_on_error() {
    let mut redis = RedisServer::start();
    let upstream = Upstream::start();
    let deny = Proxy::start(
        &[&upstream.addr],
        &(redis_store(&redis, "on_error = \"deny\"") + &keyed_policy("p", 5, "1/s", "")),
    );
    let local = Proxy::start(
        &[&upstream.addr],
        &(redis_store(&redis, "on_error = \"local\"") + &keyed_policy("p", 5, "1/s", "")),
    );
    assert_eq!(deny.admin("/readyz").unwrap().status(), 200);
    redis.kill();
    assert_eq!(deny.admin("/readyz").unwrap().status(), 503);
    let degraded = local.admin("/readyz").unwrap();
    assert_eq!(degraded.status(), 200);
    assert!(degraded.text().unwrap().contains("degraded"));
    assert_eq!(
        deny.admin("/healthz").unwrap().status(),
        200,
        "the process itself is fine"
    );
}

#[test]
fn a_proxy_whose_redis_is_away_at_start_serves_degraded_and_says_so() {
    let nobody = common::free_port();
    let upstream = Upstream::start();
    let local = format!(
        "[store]\nkind = \"redis\"\nurl = \"redis://127.0.0.1:{nobody}\"\n\n{}",
        keyed_policy("p", 2, "1/h", "")
    );
    let proxy = Proxy::start(&[&upstream.addr], &local);
    assert!(proxy.log().contains("serving degraded"), "{}", proxy.log());
    let ready = proxy.admin("/readyz").unwrap();
    assert_eq!(ready.status(), 200);
    assert!(ready.text().unwrap().contains("degraded"));
    // The local fallback decides: this instance's share of the bucket.
    assert_eq!(proxy.get("/", &[("x-api-key", "a")]).status(), 200);
    let deny = local.replace("[store]\n", "[store]\non_error = \"deny\"\n");
    let refusing = Proxy::start(&[&upstream.addr], &deny);
    assert_eq!(refusing.admin("/readyz").unwrap().status(), 503);
    assert_eq!(refusing.get("/", &[("x-api-key", "a")]).status(), 503);
}
