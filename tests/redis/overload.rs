//! The overload switch across a fleet: three instances on one real Redis, each with
//! `[overload]`. `PUT /v1/overload` on one reaches all three within a second (the `shed`
//! level sheds `low` requests with 503, the `challenge` level answers page loads of an
//! `on_overload = "challenge"` policy with the challenge page), every instance shows who set
//! it (an instance started meanwhile too), and its time to live, or `auto` on any instance,
//! undoes it everywhere.

use crate::common;

use common::control_api::{admin_tables, control};
use common::redis::RedisServer;
use common::wait::{eventually, within};
use common::{header, serial, Proxy, Upstream};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Feeds are `low`; page loads of `/page` are challenged while overloaded.
const PAGES: &str = r#"
[[policy]]
name = "pages"
match = { path_prefix = "/page" }
on_overload = "challenge"
"#;

/// How long a change may take to reach every instance.
const PROPAGATION: Duration = Duration::from_secs(1);

/// Three instances with `LOW_FEEDS` and `PAGES` on one Redis, the control API on (kept with their upstream,
/// Redis and token directory).
struct Fleet {
    proxies: Vec<Proxy>,
    upstream: Upstream,
    admin: String,
    config: String,
    _redis: RedisServer,
    _dir: tempfile::TempDir,
}

impl Fleet {
    fn start() -> Self {
        let redis = RedisServer::start();
        let dir = tempfile::tempdir().unwrap();
        let mut fleet = Self {
            proxies: Vec::new(),
            upstream: Upstream::start(),
            admin: admin_tables(dir.path(), ""),
            config: format!(
                "[store]\nkind = \"redis\"\nurl = \"{}\"\n{}{PAGES}",
                redis.url(),
                common::LOW_FEEDS
            ),
            _redis: redis,
            _dir: dir,
        };
        fleet.proxies = (0..3).map(|_| fleet.start_one()).collect();
        fleet
    }

    /// One more instance of the fleet.
    fn start_one(&self) -> Proxy {
        Proxy::start_with_tables(&[&self.upstream.addr], "", &self.admin, &self.config)
    }

    /// For each instance, how long after `since` `holds` was first true of it: each is asked
    /// in turn every 20 ms until all hold or `limit` has passed since `since`.
    fn first_seen(
        &self,
        since: Instant,
        limit: Duration,
        mut holds: impl FnMut(&Proxy) -> bool,
    ) -> Vec<Option<Duration>> {
        let mut seen = vec![None; self.proxies.len()];
        within(limit.saturating_sub(since.elapsed()), || {
            for (proxy, seen) in self.proxies.iter().zip(&mut seen) {
                if seen.is_none() && holds(proxy) {
                    *seen = Some(since.elapsed());
                }
            }
            seen.iter().all(Option::is_some)
        });
        seen
    }

    /// `GET /v1/overload` on each instance.
    fn states(&self) -> Vec<Value> {
        self.proxies
            .iter()
            .map(|proxy| control(proxy, "GET", "/v1/overload", None).1)
            .collect()
    }
}

/// The status of GET `path` on `proxy` with `accept`.
fn status(proxy: &Proxy, path: &str, accept: &str) -> u16 {
    proxy.get(path, &[("accept", accept)]).status().as_u16()
}

/// Whether `proxy` answers a page load of `/page` with the challenge page.
fn challenged(proxy: &Proxy) -> bool {
    let response = proxy.get("/page", &[("accept", "text/html,application/xhtml+xml")]);
    response.status() == 403 && header(&response, "content-type").starts_with("text/html")
}

/// Sets the switch on `proxy`; the instant just before the call.
fn switch(proxy: &Proxy, body: Value) -> Instant {
    let sent = Instant::now();
    let (status, state) = control(proxy, "PUT", "/v1/overload", Some(body));
    assert_eq!(status, 200, "{state}");
    sent
}

/// Every instance reached within `PROPAGATION`: the times, the slowest first.
fn all_within(seen: &[Option<Duration>], what: &str) -> Duration {
    assert!(
        seen.iter().all(|s| s.is_some_and(|t| t < PROPAGATION)),
        "{what} reached every instance within {PROPAGATION:?}: {seen:?}"
    );
    seen.iter().flatten().copied().max().unwrap_or_default()
}

#[test]
fn the_shed_switch_reaches_three_instances_within_a_second_and_its_ttl_undoes_it() {
    let _alone = serial::alone();
    let fleet = Fleet::start();
    for proxy in &fleet.proxies {
        assert_eq!(status(proxy, "/feed", "application/json"), 200);
    }

    let set = switch(
        &fleet.proxies[0],
        json!({"level": "shed", "ttl": "3s", "reason": "swarm"}),
    );
    let seen = fleet.first_seen(set, PROPAGATION, |proxy| {
        status(proxy, "/feed", "application/json") == 503
    });
    let slowest = all_within(&seen, "the shed switch");
    eprintln!("shed: on each instance after {seen:?} (slowest {slowest:?})");
    for proxy in &fleet.proxies {
        let shed = proxy.get("/feed", &[("accept", "application/json")]);
        assert_eq!(shed.status(), 503);
        assert!(
            shed.headers().contains_key("retry-after"),
            "{:?}",
            shed.headers()
        );
        let body: Value = shed.json().unwrap();
        assert_eq!(body["priority"], "low", "{body}");
        assert_eq!(
            status(proxy, "/other", "application/json"),
            200,
            "normal is not shed by the switch"
        );
    }
    for state in &fleet.states()[1..] {
        assert_eq!(state["level"], "shed", "{state}");
        assert_eq!(state["switch"]["level"], "shed", "{state}");
        assert_eq!(state["switch"]["by"], "ops", "{state}");
        assert!(
            state["switch"]["expires_in_s"].as_u64() <= Some(3),
            "{state}"
        );
    }

    // Its time up, the switch ends on all three: not before the 3 s, within 1 s after.
    let ttl = Duration::from_secs(3);
    let seen = fleet.first_seen(set, ttl + PROPAGATION, |proxy| {
        status(proxy, "/feed", "application/json") == 200
    });
    eprintln!("shed: ended on each instance after {seen:?} (ttl {ttl:?})");
    assert!(
        seen.iter()
            .all(|s| s.is_some_and(|t| t >= ttl && t < ttl + PROPAGATION)),
        "the switch ended on every instance between its ttl and 1 s after: {seen:?}"
    );
    for state in fleet.states() {
        assert_eq!(state["level"], "auto", "{state}");
        assert_eq!(state["switch"], Value::Null, "{state}");
    }
}

#[test]
fn the_challenge_switch_challenges_page_loads_on_three_instances_and_auto_ends_it() {
    let _alone = serial::alone();
    let mut fleet = Fleet::start();
    for proxy in &fleet.proxies {
        assert_eq!(status(proxy, "/page", "text/html"), 200);
    }

    let set = switch(
        &fleet.proxies[1],
        json!({"level": "challenge", "ttl": "1m"}),
    );
    let seen = fleet.first_seen(set, PROPAGATION, challenged);
    let slowest = all_within(&seen, "the challenge switch");
    eprintln!("challenge: on each instance after {seen:?} (slowest {slowest:?})");
    for (proxy, state) in fleet.proxies.iter().zip(fleet.states()) {
        assert_eq!(state["level"], "challenge", "{state}");
        assert_eq!(state["switch"]["by"], "ops", "{state}");
        // Other requests of the policy cannot take the challenge: 503; `low` is not shed.
        let api = proxy.get("/page", &[("accept", "application/json")]);
        assert_eq!(api.status(), 503);
        assert!(api.headers().contains_key("retry-after"));
        assert_eq!(status(proxy, "/feed", "application/json"), 200);
    }

    // An instance started while the switch is on reads it at once.
    fleet.proxies[0] = fleet.start_one();
    let took = within(PROPAGATION, || challenged(&fleet.proxies[0]));
    eprintln!("challenge: on a restarted instance after {took:?}");
    assert!(took.is_some(), "a restarted instance reads the switch");

    // `auto` on another instance ends it everywhere within a second.
    let ended = switch(&fleet.proxies[2], json!({"level": "auto"}));
    let seen = fleet.first_seen(ended, PROPAGATION, |proxy| {
        status(proxy, "/page", "text/html") == 200
    });
    let slowest = all_within(&seen, "auto");
    eprintln!("auto: on each instance after {seen:?} (slowest {slowest:?})");
    for state in fleet.states() {
        assert_eq!(state["level"], "auto", "{state}");
        assert_eq!(state["switch"], Value::Null, "{state}");
    }
}

#[test]
fn each_instance_shows_its_share_of_max_in_flight_before_any_request() {
    let fleet = Fleet::start();
    let learned = eventually(Duration::from_secs(10), || {
        fleet
            .proxies
            .iter()
            .all(|p| p.metric("floodgate_store_fleet_size") == 3.0)
    });
    assert!(learned, "every instance counts three");
    // 8 among 3: 2 each, shown by the API and the gauge within a refresh, no request needed.
    let limits = |proxy: &Proxy| {
        let (_, state) = control(proxy, "GET", "/v1/overload", None);
        let series = "floodgate_overload_limit{pool=\"default\"}";
        (state["pools"][0]["limit"].as_u64(), proxy.metric(series))
    };
    let shown = fleet.first_seen(Instant::now(), PROPAGATION, |proxy| {
        limits(proxy) == (Some(2), 2.0)
    });
    let shown_by_all = shown.iter().all(Option::is_some);
    let limits: Vec<_> = fleet.proxies.iter().map(limits).collect();
    assert!(shown_by_all, "each shows 2 of 8: {limits:?}");
    assert_eq!(fleet.upstream.served(), 0, "no request went through");
}
