//! `max_in_flight` end to end: concurrent requests over the cap refused, a long request
//! keeping its slot past its lease (renewed), a shadow policy never blocking when its slots
//! fail, and a killed instance's slots coming back after their lease.

use super::at_once;
use crate::common::fleet::{Fleet, Store};
use crate::common::redis::RedisServer;
use crate::common::{header, Proxy, Upstream};
use std::time::{Duration, Instant};

on_every_store!(concurrent_requests, a_long_request_keeps_its_slot);

/// `max_in_flight = 2`: three concurrent slow requests → two pass, one 429; the slots come
/// back when the requests end.
fn concurrent_requests(store: Store) {
    let policies = r#"
[[policy]]
name = "conc"
capacity = 100
rate = "100/s"
max_in_flight = 2
"#;
    let fleet = Fleet::start(store, policies, "");
    let answers = at_once(&fleet, &["/slow?ms=1500"; 3]);
    let mut statuses: Vec<u16> = answers.iter().map(|a| a.0).collect();
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 200, 429], "{answers:?}");
    let refused = answers.iter().find(|a| a.0 == 429).expect("one refused");
    assert_eq!(refused.1, "\"conc\";q=2;qu=\"concurrent-requests\"");
    assert!(
        refused.2 < 1.0,
        "refused at once, not after the others: {answers:?}"
    );
    assert_eq!(
        fleet.metric("floodgate_in_flight_refused_total{policy=\"conc\"}"),
        1.0
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while fleet.metric("floodgate_in_flight{policy=\"conc\"}") > 0.0 {
        assert!(Instant::now() < deadline, "the slots come back");
        std::thread::sleep(Duration::from_millis(20));
    }
    let again = at_once(&fleet, &["/slow?ms=10"; 2]);
    assert!(again.iter().all(|a| a.0 == 200), "{again:?}");
}

/// `max_in_flight = 1` with a lease of 1 s (on Redis): a request that lasts 3.5 s keeps its
/// slot past its first lease, so a second one is refused 2.5 s in (asked of another instance
/// when there are several); once the first ends, the slot is free.
fn a_long_request_keeps_its_slot(store: Store) {
    let policies = r#"
[[policy]]
name = "stream"
capacity = 100
rate = "100/s"
max_in_flight = 1
"#;
    let fleet = Fleet::start(store, policies, "in_flight_lease = \"1s\"");
    let started = Instant::now();
    let long = fleet.proxy().url("/slow?ms=3500");
    let under_way = std::thread::spawn(move || {
        let client = reqwest::blocking::Client::new();
        client.get(long).timeout(Duration::from_secs(20)).send()
    });
    while fleet.metric("floodgate_in_flight{policy=\"stream\"}") < 1.0 {
        assert!(started.elapsed() < Duration::from_secs(2), "under way");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(2500).saturating_sub(started.elapsed()));
    let second = fleet.get("/", &[]);
    assert_eq!(second.status(), 429, "the slot outlived its first lease");
    assert_eq!(
        header(&second, "ratelimit-policy"),
        "\"stream\";q=1;qu=\"concurrent-requests\""
    );
    assert!(
        started.elapsed() < Duration::from_millis(3400),
        "asked while the first runs"
    );
    let first = under_way
        .join()
        .expect("the long request")
        .expect("answered");
    assert_eq!(first.status(), 200);
    while fleet.metric("floodgate_in_flight{policy=\"stream\"}") > 0.0 {
        assert!(started.elapsed() < Duration::from_secs(8), "released");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(fleet.status("/"), 200, "its slot came back when it ended");
}

/// A shadow policy never blocks, even when Redis refuses its slots and `on_error = "deny"`:
/// Redis's ACL lets the proxy at every key but the in-flight sets, so an enforcing policy with
/// `max_in_flight` answers 503 while the shadow one lets the request through.
#[test]
fn a_shadow_policys_failing_slots_never_refuse() {
    let acl = ["gate", "on", ">secret", "+@all", "~*:hash_key", "~*:fleet"];
    let keys = ["~*:main", "~*:watch", "~*:guard"];
    let redis = RedisServer::start_with(&[&["--user"][..], &acl, &keys].concat());
    let upstream = Upstream::start();
    let config = format!(
        r#"
[store]
kind = "redis"
url = "{}"
username = "gate"
password = "secret"
on_error = "deny"

[[policy]]
name = "main"
capacity = 100
rate = "100/s"

[[policy]]
name = "watch"
capacity = 100
rate = "100/s"
max_in_flight = 1
shadow = true

[[policy]]
name = "guard"
capacity = 100
rate = "100/s"
max_in_flight = 1
match = {{ path_prefix = "/guarded" }}
"#,
        redis.url()
    );
    let proxy = Proxy::start(&[&upstream.addr], &config);
    assert_eq!(
        proxy.get("/guarded", &[]).status(),
        503,
        "an enforcing slot"
    );
    assert_eq!(proxy.get("/", &[]).status(), 200, "only a shadow slot");
}

/// On Redis, slots are leases: the slots of an instance killed with requests under way come
/// back when their leases end (`store.in_flight_lease`).
#[test]
fn a_killed_instances_slots_come_back_after_their_lease() {
    let policies = r#"
[[policy]]
name = "conc"
capacity = 100
rate = "100/s"
max_in_flight = 2
"#;
    let mut fleet = Fleet::start(Store::Redis(2), policies, "in_flight_lease = \"2s\"");
    let doomed = fleet.proxies.remove(0);
    let url = doomed.url("/slow?ms=30000");
    let under_way: Vec<_> = (0..2)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || {
                let client = reqwest::blocking::Client::new();
                let _ = client.get(url).timeout(Duration::from_secs(40)).send();
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(5);
    while doomed.metric("floodgate_in_flight{policy=\"conc\"}") < 2.0 {
        assert!(Instant::now() < deadline, "two requests under way");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(doomed);
    let killed_at = Instant::now();
    assert_eq!(
        fleet.status("/"),
        429,
        "the dead instance's slots are still leased"
    );
    while fleet.status("/") == 429 {
        assert!(
            killed_at.elapsed() < Duration::from_secs(8),
            "the leases end"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let waited = killed_at.elapsed();
    assert!(
        waited >= Duration::from_millis(800),
        "not before the lease: {waited:?}"
    );
    for thread in under_way {
        thread
            .join()
            .expect("the request thread ends with its proxy");
    }
}
