//! Exact under load, with the default store settings (only the address and the `on_error`
//! under test are set, as a user would): three proxies share one caller's bucket while twelve
//! client threads hammer it from the moment the listeners open, on a healthy, a slowed, a
//! killed Redis, and a Redis Cluster. Each scenario prints admitted ÷ exact (`bench/exact`
//! collects these lines), the exact token bucket counted over the span the requests covered:
//! from the first request sent to the last answer received.

use crate::common;

use common::cluster::RedisCluster;
use common::load::{hammer, LoadReport};
use common::redis::RedisServer;
use common::relay::Relay;
use common::{Proxy, Upstream};
use std::time::Duration;

const CAPACITY: f64 = 20.0;
const RATE: f64 = 50.0;
const THREADS_PER_PROXY: usize = 4;

fn policy() -> String {
    format!(
        "[identity]\nsources = [\"header:x-api-key\"]\n\n\
         [[policy]]\nname = \"shared\"\ncapacity = {CAPACITY}\nrate = \"{RATE}/s\"\n"
    )
}

fn standalone(url: &str, on_error: &str) -> String {
    format!("[store]\nkind = \"redis\"\nurl = \"{url}\"\non_error = \"{on_error}\"\n\n") + &policy()
}

fn cluster(cluster: &RedisCluster, on_error: &str) -> String {
    let nodes: Vec<String> = cluster.seeds().iter().map(|s| format!("\"{s}\"")).collect();
    format!(
        "[store]\nkind = \"redis\"\nnodes = [{}]\non_error = \"{on_error}\"\n\n",
        nodes.join(", ")
    ) + &policy()
}

/// Starts three proxies on `config` and hammers one caller through all of them for
/// `duration`, starting as soon as the last listener is open; `during` runs meanwhile, given
/// the proxies' URLs.
/// Returns the load, the seconds its requests spanned, and the proxies.
fn flood(
    upstream: &Upstream,
    config: &str,
    duration: Duration,
    during: impl FnOnce(&[String]),
) -> (LoadReport, f64, Vec<Proxy>) {
    // One scenario at a time: each is three proxies and twelve client threads on this machine.
    let _turn = common::serial::alone();
    let proxies: Vec<Proxy> = (0..3)
        .map(|_| Proxy::start(&[&upstream.addr], config))
        .collect();
    let urls: Vec<String> = proxies.iter().map(|p| p.url("/")).collect();
    let report = std::thread::scope(|scope| {
        let load = scope.spawn(|| {
            hammer(
                &urls,
                THREADS_PER_PROXY,
                duration,
                Duration::ZERO,
                &[("x-api-key", "flood")],
            )
        });
        during(&urls);
        load.join().expect("load")
    });
    for (i, proxy) in proxies.iter().enumerate() {
        let series = [
            "floodgate_store_errors_total{kind=\"timeout\"}",
            "floodgate_store_errors_total{kind=\"unavailable\"}",
            "floodgate_store_errors_total{kind=\"breaker_open\"}",
            "floodgate_store_fallback_total",
            "floodgate_store_late_replies_total",
            "floodgate_store_coalesced_total",
            "floodgate_deny_cache_hits_total",
            "floodgate_store_fleet_size",
        ];
        let values: Vec<String> = series
            .iter()
            .map(|s| format!("{}={}", s.trim_start_matches("floodgate_"), proxy.metric(s)))
            .collect();
        eprintln!("proxy {i}: {}", values.join(" "));
        for line in proxy
            .log()
            .lines()
            .filter(|l| l.contains("WARN") || l.contains("ERROR"))
        {
            eprintln!("proxy {i} log: {line}");
        }
    }
    let span = report.span();
    (report, span, proxies)
}

/// Admitted ÷ exact, printed for `bench/exact`.
fn ratio(scenario: &str, report: &LoadReport, exact: f64) -> f64 {
    let admitted = report.count(200) as f64;
    let ratio = admitted / exact;
    eprintln!(
        "exact-under-load {scenario}: admitted {admitted} of {} (exact {exact:.1}) ratio {ratio:.3} statuses {:?}",
        report.total(),
        report.statuses
    );
    ratio
}

/// Every request answered 200 or 429: none failed.
fn assert_none_failed(report: &LoadReport) {
    assert_eq!(
        report.count(200) + report.count(429),
        report.total(),
        "{:?}",
        report.statuses
    );
}

/// Every request answered 200, 429, or (`on_error = "deny"` while the store cannot decide)
/// 503.
fn assert_all_decided(report: &LoadReport) {
    assert_eq!(
        report.count(200) + report.count(429) + report.count(503),
        report.total(),
        "{:?}",
        report.statuses
    );
}

/// Within max(2, 1 %) plus 20 ms of refill of the exact bucket, on both sides (less the
/// edges of the measured span below).
fn assert_within_exact(scenario: &str, report: &LoadReport, span: f64) {
    assert_none_failed(report);
    let exact = CAPACITY + RATE * span;
    ratio(scenario, report, exact);
    let tolerance = (0.01 * exact).max(2.0) + RATE * 0.02;
    let admitted = report.count(200) as f64;
    assert!(
        admitted <= exact + tolerance,
        "{scenario}: over-admitted {admitted} > {exact:.1} + {tolerance:.1}"
    );
    assert!(
        admitted >= exact - tolerance - RATE * 0.1,
        "{scenario}: under-admitted {admitted} < {exact:.1}"
    );
}

fn healthy(on_error: &str) {
    let redis = RedisServer::start();
    let upstream = Upstream::start();
    let config = standalone(&redis.url(), on_error);
    let (report, span, _proxies) = flood(&upstream, &config, Duration::from_secs(3), |_| {});
    assert_within_exact(&format!("standalone on_error={on_error}"), &report, span);
}

#[test]
fn three_instances_hold_the_exact_limit_with_defaults_and_on_error_allow() {
    healthy("allow");
}

#[test]
fn three_instances_hold_the_exact_limit_with_defaults_and_on_error_local() {
    healthy("local");
}

fn on_a_cluster(on_error: &str) {
    let nodes = RedisCluster::start(3, 0);
    let upstream = Upstream::start();
    let (report, span, _proxies) = flood(
        &upstream,
        &cluster(&nodes, on_error),
        Duration::from_secs(3),
        |_| {},
    );
    assert_within_exact(&format!("cluster on_error={on_error}"), &report, span);
}

#[test]
fn three_instances_on_a_cluster_hold_the_exact_limit_with_defaults_and_on_error_allow() {
    on_a_cluster("allow");
}

#[test]
fn three_instances_on_a_cluster_hold_the_exact_limit_with_defaults_and_on_error_local() {
    on_a_cluster("local");
}

/// Slows Redis by `delay` from 1 s into a 4 s flood for 2 s; with `others`, other callers
/// (a new one each request, one thread per proxy) ask meanwhile.
fn slowed(on_error: &str, delay: Duration, others: bool) -> (LoadReport, f64, Vec<Proxy>) {
    let redis = RedisServer::start();
    let relay = Relay::start(redis.port);
    let upstream = Upstream::start();
    let config = standalone(&format!("redis://127.0.0.1:{}", relay.port), on_error);
    let (report, span, proxies) = flood(&upstream, &config, Duration::from_secs(4), |urls| {
        let others = others.then(|| {
            let urls = urls.to_vec();
            std::thread::spawn(move || {
                let client = reqwest::blocking::Client::new();
                let end = std::time::Instant::now() + Duration::from_secs(4);
                for n in 0.. {
                    if std::time::Instant::now() >= end {
                        break;
                    }
                    let url = &urls[n % urls.len()];
                    let _ = client
                        .get(url)
                        .header("x-api-key", format!("other-{n}"))
                        .send();
                }
            })
        });
        std::thread::sleep(Duration::from_secs(1));
        relay.set_delay(delay);
        std::thread::sleep(Duration::from_secs(2));
        relay.set_delay(Duration::ZERO);
        others.map(|o| o.join());
    });
    (report, CAPACITY + RATE * span, proxies)
}

#[test]
fn redis_slowed_to_20ms_for_2s_stays_within_a_fifth_of_exact_and_fails_nothing() {
    let (report, exact, _proxies) = slowed("local", Duration::from_millis(20), false);
    assert_none_failed(&report);
    let r = ratio("slowed 20 ms for 2 s, on_error=local", &report, exact);
    assert!(r <= 1.2, "admitted {r:.3} × exact");
}

#[test]
fn redis_slowed_to_20ms_with_allow_or_deny_still_decides_every_request() {
    for on_error in ["allow", "deny"] {
        let (report, exact, _proxies) = slowed(on_error, Duration::from_millis(20), false);
        assert_all_decided(&report);
        ratio(
            &format!("slowed 20 ms for 2 s, on_error={on_error}"),
            &report,
            exact,
        );
    }
}

#[test]
fn redis_slower_than_the_budget_is_decided_locally_and_its_late_replies_are_learned() {
    // 300 ms: past the call's budget (`store.timeout`, 250 ms), and 200 ms inside the round's
    // own (500 ms), so a machine loaded by other tests still sees the replies come back late
    // rather than not at all. Other callers ask meanwhile: the flooding caller's requests
    // ask Redis one at a time once its refusal lapses, so it alone has few calls out, and a
    // late reply needs a call out when Redis comes back.
    let (report, exact, proxies) = slowed("local", Duration::from_millis(300), true);
    assert_none_failed(&report);
    let r = ratio(
        "slowed 300 ms (past the budget) for 2 s, on_error=local",
        &report,
        exact,
    );
    assert!(r <= 1.2, "admitted {r:.3} × exact");
    let late: f64 = proxies
        .iter()
        .map(|p| p.metric("floodgate_store_late_replies_total"))
        .sum();
    assert!(late > 0.0, "late replies were learned");
}

/// Kills Redis 1 s into a 4 s flood and restarts it 2 s later.
fn killed(on_error: &str) -> (LoadReport, f64) {
    let mut redis = RedisServer::start();
    let upstream = Upstream::start();
    let config = standalone(&redis.url(), on_error);
    let (report, span, _proxies) = flood(&upstream, &config, Duration::from_secs(4), |_| {
        std::thread::sleep(Duration::from_secs(1));
        redis.kill();
        std::thread::sleep(Duration::from_secs(2));
        redis.restart();
    });
    (report, CAPACITY + RATE * span)
}

#[test]
fn redis_killed_for_2s_with_local_stays_within_a_fifth_of_exact() {
    let (report, exact) = killed("local");
    assert_none_failed(&report);
    let r = ratio("killed for 2 s, on_error=local", &report, exact);
    assert!(r <= 1.2, "admitted {r:.3} × exact");
}

#[test]
fn redis_killed_for_2s_with_allow_serves_every_request() {
    let (report, exact) = killed("allow");
    assert_none_failed(&report);
    ratio("killed for 2 s, on_error=allow", &report, exact);
}

#[test]
fn redis_killed_for_2s_with_deny_refuses_with_503_and_admits_no_more_than_exact() {
    let (report, exact) = killed("deny");
    assert_all_decided(&report);
    assert!(report.count(503) > 0, "{:?}", report.statuses);
    let r = ratio("killed for 2 s, on_error=deny", &report, exact);
    assert!(r <= 1.2, "admitted {r:.3} × exact");
}

#[test]
fn leases_on_a_hot_caller_never_admit_above_exact_and_hold_back_at_most_their_cap() {
    // Capacity 600 at 300/s: each of three instances sees ~100 allowed requests a second, hot
    // enough for leases of up to 600 × 5 % ÷ 3 = 10 tokens (the default 1 s lease).
    let redis = RedisServer::start();
    let upstream = Upstream::start();
    let config = format!(
        "[store]\nkind = \"redis\"\nurl = \"{}\"\n\n\
         [identity]\nsources = [\"header:x-api-key\"]\n\n\
         [[policy]]\nname = \"hot\"\ncapacity = 600\nrate = \"300/s\"\n",
        redis.url()
    );
    let (report, span, proxies) = flood(&upstream, &config, Duration::from_secs(3), |_| {});
    assert_none_failed(&report);
    let exact = 600.0 + 300.0 * span;
    let r = ratio(
        "hot caller with leases, capacity 600 at 300/s",
        &report,
        exact,
    );
    let sum = |series: &str| -> f64 { proxies.iter().map(|p| p.metric(series)).sum() };
    let leases = sum("floodgate_store_leases_total");
    let hits = sum("floodgate_store_lease_hits_total");
    // At most three leases of 10 tokens are out of reach at any time.
    let bound = 3.0 * 10.0;
    eprintln!(
        "exact-under-load leases: {leases} granted, {hits} requests decided from them; \
         under-admission bound {bound} tokens ({:.3} of exact)",
        bound / exact
    );
    assert!(leases > 0.0 && hits > 0.0, "leases were used");
    // A lease sent back has nobody waiting for its answer: that is no late reply. Only a
    // request that stopped waiting (a timeout) leaves one.
    assert!(
        sum("floodgate_store_late_replies_total")
            <= sum("floodgate_store_errors_total{kind=\"timeout\"}"),
        "late replies without a timeout"
    );
    let admitted = report.count(200) as f64;
    let tolerance = (0.01 * exact).max(2.0) + 300.0 * 0.02;
    assert!(
        admitted <= exact + tolerance,
        "over-admitted {admitted} > {exact:.1}"
    );
    assert!(
        admitted >= exact - bound - tolerance - 300.0 * 0.1,
        "under-admitted past the bound: {admitted} < {exact:.1} − {bound}"
    );
    assert!(r <= 1.0 + tolerance / exact);
}
