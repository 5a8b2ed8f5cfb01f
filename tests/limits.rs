//! Issue 16, end to end: limits that see the response and the cost (count_status,
//! cost_header, settle_header), concurrency (max_in_flight), shaping (max_delay), penalties
//! (block_for) and request facts as identity parts. Each scenario runs on the memory store,
//! on Redis, and on Redis shared by three instances (asked in turn).

mod common;

use common::fleet::{Fleet, Store};
use common::redis::RedisServer;
use common::{Proxy, Upstream};
use reqwest::blocking::Response;
use std::time::{Duration, Instant};

fn header(resp: &Response, name: &str) -> String {
    resp.headers()
        .get(name)
        .map(|v| v.to_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

/// `GET path` from every proxy in turn at once, one request per thread: (status,
/// `ratelimit-policy`, seconds taken) of each, in the order they were sent.
fn at_once(fleet: &Fleet, paths: &[&str]) -> Vec<(u16, String, f64)> {
    std::thread::scope(|scope| {
        let threads: Vec<_> = paths
            .iter()
            .map(|path| {
                let proxy = fleet.proxy();
                scope.spawn(move || {
                    let started = Instant::now();
                    let resp = proxy.get(path, &[]);
                    let policy = header(&resp, "ratelimit-policy");
                    (
                        resp.status().as_u16(),
                        policy,
                        started.elapsed().as_secs_f64(),
                    )
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("a request thread"))
            .collect()
    })
}

/// Three tests per scenario: `memory`, `redis` and `redis_three_instances`.
macro_rules! on_every_store {
    ($($scenario:ident),+ $(,)?) => {
        $(mod $scenario {
            use super::*;

            #[test]
            fn memory() {
                super::$scenario(Store::Memory);
            }

            #[test]
            fn redis() {
                super::$scenario(Store::Redis(1));
            }

            #[test]
            fn redis_three_instances() {
                super::$scenario(Store::Redis(3));
            }
        })+
    };
}

on_every_store!(
    login_brute_force,
    cost_from_a_header,
    reserve_then_settle,
    concurrent_requests,
    a_long_request_keeps_its_slot,
    wait_instead_of_refuse,
    penalty_box,
    per_endpoint_buckets,
    seed_003_wait_instead_of_reject,
);

/// `count_status = [401, 403]`: six successes and three failures answered, the fourth failure
/// refused; successes were refunded, failures kept.
fn login_brute_force(store: Store) {
    let policies = r#"
[[policy]]
name = "login"
capacity = 3
rate = "1/h"
count_status = [401, 403]
match = { path_prefix = "/login" }
"#;
    let fleet = Fleet::start(store, policies, "");
    let (ok, failed) = ("/login?status=200", "/login?status=401");
    let answered: Vec<u16> = [ok, failed, ok, ok, failed, ok, ok, ok, failed]
        .iter()
        .map(|path| fleet.status(path))
        .collect();
    assert_eq!(answered, [200, 401, 200, 200, 401, 200, 200, 200, 401]);
    let refused = fleet.get(failed, &[]);
    assert_eq!(refused.status(), 429, "the fourth failure");
    assert_eq!(header(&refused, "content-type"), "application/problem+json");
    assert_eq!(
        fleet.status(ok),
        429,
        "refused up front: the bucket cannot pay"
    );
    let settles = |result: &str| {
        fleet.metric(&format!(
            "floodgate_settles_total{{policy=\"login\",result=\"{result}\"}}"
        ))
    };
    assert_eq!((settles("refunded"), settles("kept")), (6.0, 3.0));
}

/// `cost_header`: 7, 4, 3 on capacity 10 → 200, 429, 200; a malformed or too large cost → 400.
fn cost_from_a_header(store: Store) {
    let policies = r#"
[[policy]]
name = "metered"
capacity = 10
rate = "1/h"
cost_header = "x-cost"
"#;
    let fleet = Fleet::start(store, policies, "");
    let cost = |c: &str| fleet.get("/", &[("x-cost", c)]).status().as_u16();
    assert_eq!([cost("7"), cost("4"), cost("3")], [200, 429, 200]);
    for bad in ["abc", "11", "0", "-1", "1.5"] {
        let resp = fleet.get("/", &[("x-cost", bad)]);
        assert_eq!(resp.status(), 400, "{bad:?}");
        assert_eq!(header(&resp, "content-type"), "application/problem+json");
        let body: serde_json::Value = resp.json().expect("a problem body");
        assert_eq!(body["policy"], "metered");
    }
    assert_eq!(
        fleet.upstream.served(),
        2,
        "refusals never reach the backend"
    );
}

/// `settle_header`: reserve 50 with usage 10 on capacity 100: six pass, the seventh cannot
/// reserve; usage above the reservation leaves debt that refuses the next request.
fn reserve_then_settle(store: Store) {
    let policies = r#"
[identity]
sources = ["header:x-api-key"]

[[policy]]
name = "llm"
capacity = 100
rate = "1/h"
cost = 50
settle_header = "x-usage"
"#;
    let fleet = Fleet::start(store, policies, "");
    let alice = |path: &str| fleet.get(path, &[("x-api-key", "alice")]).status().as_u16();
    for i in 0..6 {
        assert_eq!(alice("/llm?usage=10"), 200, "request {i}");
    }
    assert_eq!(alice("/llm?usage=10"), 429, "40 left cannot reserve 50");
    let bob = |path: &str| fleet.get(path, &[("x-api-key", "bob")]).status().as_u16();
    assert_eq!(bob("/llm?usage=150"), 200, "reserved 50 of 100, used 150");
    let in_debt = fleet.get("/llm?usage=1", &[("x-api-key", "bob")]);
    assert_eq!(in_debt.status(), 429, "the bucket is 50 in debt");
    let retry: u64 = header(&in_debt, "retry-after")
        .parse()
        .expect("retry-after");
    assert!(retry > 3600, "100 tokens at 1/h: {retry}");
    assert_eq!(alice("/llm"), 429, "no header: the reservation stands");
    let settles = |result: &str| {
        fleet.metric(&format!(
            "floodgate_settles_total{{policy=\"llm\",result=\"{result}\"}}"
        ))
    };
    assert_eq!((settles("refunded"), settles("charged")), (6.0, 1.0));
}

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

/// `block_for = "3s"` on a fast-refilling bucket: refused for 3 s after the first refusal,
/// then allowed; `Retry-After` says so.
fn penalty_box(store: Store) {
    let policies = r#"
[[policy]]
name = "box"
capacity = 1
rate = "20/s"
block_for = "3s"
"#;
    let fleet = Fleet::start(store, policies, "");
    assert_eq!(fleet.status("/"), 200);
    let refused = fleet.get("/", &[]);
    let blocked_at = Instant::now();
    assert_eq!(refused.status(), 429);
    assert_eq!(header(&refused, "retry-after"), "3");
    for at in [500, 1500, 2500] {
        std::thread::sleep(Duration::from_millis(at).saturating_sub(blocked_at.elapsed()));
        let during = fleet.get("/", &[]);
        assert_eq!(during.status(), 429, "{at} ms into the block");
        let retry: u64 = header(&during, "retry-after").parse().expect("retry-after");
        assert!((1..=3).contains(&retry), "{retry} s left at {at} ms");
    }
    std::thread::sleep(Duration::from_millis(3300).saturating_sub(blocked_at.elapsed()));
    assert_eq!(fleet.status("/"), 200, "the block is over");
    let penalties = |event: &str| {
        fleet.metric(&format!(
            "floodgate_penalties_total{{event=\"{event}\",policy=\"box\"}}"
        ))
    };
    assert_eq!(penalties("started"), 1.0);
    assert_eq!(penalties("refused"), 3.0);
}

/// `ip+path`: `/ep/a` twice → 200, 429; `/ep/b` → 200. `const:` is one bucket for all.
fn per_endpoint_buckets(store: Store) {
    let policies = r#"
[identity]
sources = ["header:x-api-key"]

[[policy]]
name = "per-endpoint"
capacity = 1
rate = "1/h"
sources = ["ip+path"]
match = { path_prefix = "/ep/" }

[[policy]]
name = "shared"
capacity = 2
rate = "1/h"
sources = ["const:backend"]
match = { path_prefix = "/shared" }
"#;
    let fleet = Fleet::start(store, policies, "");
    assert_eq!(fleet.status("/ep/a"), 200);
    assert_eq!(fleet.status("/ep/a"), 429);
    assert_eq!(fleet.status("/ep/b"), 200);
    assert_eq!(fleet.status("/ep/b?q=1"), 429, "the path, not the query");
    let key = |k| fleet.get("/shared", &[("x-api-key", k)]).status();
    assert_eq!([key("alice"), key("bob"), key("carol")], [200, 200, 429]);
}

/// Seed 003 (Guava's `tryAcquire(timeout)`, "wait instead of reject"): one permit, two per
/// second, a one-second timeout. Four requests at once: the first passes at once, the next two
/// are held about 0.5 s and 1 s (each prepaid its permit), the fourth would wait 1.5 s and is
/// refused at once.
fn seed_003_wait_instead_of_reject(store: Store) {
    let policies = r#"
[[policy]]
name = "guava"
capacity = 1
rate = "2/s"
max_delay = "1s"
"#;
    let fleet = Fleet::start(store, policies, "");
    let answers = at_once(&fleet, &["/"; 4]);
    let mut passed: Vec<f64> = answers.iter().filter(|a| a.0 == 200).map(|a| a.2).collect();
    passed.sort_by(f64::total_cmp);
    let refused: Vec<f64> = answers.iter().filter(|a| a.0 == 429).map(|a| a.2).collect();
    assert_eq!((passed.len(), refused.len()), (3, 1), "{answers:?}");
    assert!(passed[0] < 0.4, "the first passes at once: {passed:?}");
    assert!(
        passed[2] >= 0.7 && passed[2] < 2.0,
        "the last waits about 1 s: {passed:?}"
    );
    assert!(refused[0] < 0.5, "a refusal does not wait: {refused:?}");
    let held = fleet.metric("floodgate_held_total{policy=\"guava\",result=\"held\"}");
    assert_eq!(held, 2.0);
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
