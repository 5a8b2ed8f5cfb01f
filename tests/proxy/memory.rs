//! The proxy on the memory store, end to end: real upstream, real binary, real HTTP client.

use crate::common;
use common::PER_USER;

use common::{free_port, header, requests_series, Proxy, Upstream};
use std::time::{Duration, Instant};

#[test]
fn a_burst_of_capacity_passes_then_429_with_headers() {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], PER_USER);
    for left in (0..5).rev() {
        let resp = proxy.get("/", &[("x-api-key", "alice")]);
        assert_eq!(resp.status(), 200);
        assert_eq!(header(&resp, "ratelimit-policy"), "\"per-user\";q=5;w=300");
        assert!(header(&resp, "ratelimit").starts_with(&format!("\"per-user\";r={left};t=")));
    }
    let refused = proxy.get("/", &[("x-api-key", "alice")]);
    assert_eq!(refused.status(), 429);
    let retry_after: u64 = header(&refused, "retry-after").parse().unwrap();
    assert!(
        (59..=60).contains(&retry_after),
        "one token takes 60 s: {retry_after}"
    );
    assert_eq!(
        header(&refused, "ratelimit-policy"),
        "\"per-user\";q=5;w=300"
    );
    let ratelimit = header(&refused, "ratelimit");
    assert!(ratelimit.starts_with("\"per-user\";r=0;t="), "{ratelimit}");
    let t: u64 = ratelimit.rsplit("t=").next().unwrap().parse().unwrap();
    assert!(
        (295..=300).contains(&t),
        "the bucket is full again in 300 s: {t}"
    );
    assert_eq!(header(&refused, "content-type"), "application/problem+json");
    let body: serde_json::Value = refused.json().unwrap();
    assert_eq!(body["policy"], "per-user");
    assert_eq!(body["status"], 429);
    assert_eq!(
        upstream.served(),
        5,
        "refused requests never reach the backend"
    );
}

#[test]
fn after_one_over_rate_seconds_one_more_passes() {
    let upstream = Upstream::start();
    let config = "[[policy]]\nname = \"p\"\ncapacity = 2\nrate = \"1/s\"\n";
    let proxy = Proxy::start(&[&upstream.addr], config);
    assert_eq!(proxy.get("/", &[]).status(), 200);
    assert_eq!(proxy.get("/", &[]).status(), 200);
    let refused = proxy.get("/", &[]);
    assert_eq!(refused.status(), 429);
    assert_eq!(header(&refused, "retry-after"), "1");
    std::thread::sleep(Duration::from_millis(1100));
    let start = Instant::now();
    assert_eq!(proxy.get("/", &[]).status(), 200, "one token refilled");
    let next = proxy.get("/", &[]);
    if start.elapsed() < Duration::from_millis(800) {
        assert_eq!(next.status(), 429, "only one token refilled");
    }
}

#[test]
fn two_identities_have_separate_buckets() {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], PER_USER);
    for _ in 0..5 {
        assert_eq!(proxy.get("/", &[("x-api-key", "alice")]).status(), 200);
    }
    assert_eq!(proxy.get("/", &[("x-api-key", "alice")]).status(), 429);
    assert_eq!(proxy.get("/", &[("x-api-key", "bob")]).status(), 200);
    // Without a key the caller falls back to its address: a bucket of its own too.
    assert_eq!(proxy.get("/", &[]).status(), 200);
}

#[test]
fn a_request_refused_by_one_policy_takes_nothing_from_the_other() {
    let upstream = Upstream::start();
    // `slow` holds 3 tokens that do not come back during the test; `fast` holds one that
    // comes back every half second. Requests refused by `fast` must not drain `slow`.
    let config = "[[policy]]\nname = \"slow\"\ncapacity = 3\nrate = \"1/h\"\n\n\
                  [[policy]]\nname = \"fast\"\ncapacity = 1\nrate = \"2/s\"\n";
    let proxy = Proxy::start(&[&upstream.addr], config);
    assert_eq!(proxy.get("/", &[]).status(), 200);
    let start = Instant::now();
    let mut refused_by_fast = 0;
    while start.elapsed() < Duration::from_millis(300) {
        let resp = proxy.get("/", &[]);
        assert_eq!(resp.status(), 429);
        assert_eq!(resp.json::<serde_json::Value>().unwrap()["policy"], "fast");
        refused_by_fast += 1;
    }
    assert!(refused_by_fast >= 3);
    for _ in 0..2 {
        std::thread::sleep(Duration::from_millis(600));
        assert_eq!(proxy.get("/", &[]).status(), 200, "`slow` still had tokens");
    }
    std::thread::sleep(Duration::from_millis(600));
    let last = proxy.get("/", &[]);
    assert_eq!(last.status(), 429);
    assert_eq!(last.json::<serde_json::Value>().unwrap()["policy"], "slow");
    assert_eq!(proxy.metric(&requests_series("slow", "allowed")), 3.0);
    assert_eq!(
        proxy.metric(&requests_series("slow", "throttled_by_other")),
        refused_by_fast as f64
    );
}

#[test]
fn the_counters_equal_the_responses_seen() {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], PER_USER);
    let (mut ok, mut throttled) = (0, 0);
    for i in 0..40 {
        let key = format!("user-{}", i % 3);
        match proxy.get("/", &[("x-api-key", &key)]).status().as_u16() {
            200 => ok += 1,
            429 => throttled += 1,
            other => panic!("unexpected status {other}"),
        }
    }
    assert_eq!(ok, 15, "three callers, five each");
    assert_eq!(
        proxy.metric(&requests_series("per-user", "allowed")),
        ok as f64
    );
    assert_eq!(
        proxy.metric(&requests_series("per-user", "throttled")),
        throttled as f64
    );
}

#[test]
fn an_unreachable_backend_gives_502_and_is_counted() {
    let nowhere = format!("127.0.0.1:{}", free_port());
    let proxy = Proxy::start(&[&nowhere], PER_USER);
    let resp = proxy.get("/", &[]);
    assert_eq!(resp.status(), 502);
    assert_eq!(header(&resp, "content-type"), "application/problem+json");
    let body: serde_json::Value = resp.json().unwrap();
    assert_eq!(body["status"], 502);
    assert_eq!(
        proxy.metric("floodgate_upstream_errors_total{kind=\"connect\"}"),
        1.0
    );
}

#[test]
fn backends_are_used_round_robin_and_a_dead_one_is_skipped() {
    let (a, b) = (Upstream::start(), Upstream::start());
    let dead = format!("127.0.0.1:{}", free_port());
    let proxy = Proxy::start(&[&a.addr, &b.addr, &dead], "");
    for _ in 0..30 {
        assert_eq!(proxy.get("/", &[]).status(), 200);
    }
    assert!(
        a.served() >= 5 && b.served() >= 5,
        "{} / {}",
        a.served(),
        b.served()
    );
    assert_eq!(a.served() + b.served(), 30);
}

#[test]
fn shadow_policies_count_but_never_block() {
    let upstream = Upstream::start();
    let config = "[[policy]]\nname = \"trial\"\ncapacity = 2\nrate = \"1/h\"\nshadow = true\n";
    let proxy = Proxy::start(&[&upstream.addr], config);
    for _ in 0..6 {
        assert_eq!(proxy.get("/", &[]).status(), 200);
    }
    assert_eq!(proxy.metric(&requests_series("trial", "allowed")), 2.0);
    assert_eq!(
        proxy.metric(&requests_series("trial", "shadow_throttled")),
        4.0
    );
}

#[test]
fn the_admin_listener_answers_health_and_unknown_paths() {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], PER_USER);
    assert_eq!(proxy.admin("/healthz").unwrap().status(), 200);
    assert_eq!(proxy.admin("/readyz").unwrap().status(), 200);
    assert_eq!(proxy.admin("/nope").unwrap().status(), 404);
    let metrics = proxy.admin("/metrics").unwrap().text().unwrap();
    assert!(metrics.contains("floodgate_build_info"));
}
