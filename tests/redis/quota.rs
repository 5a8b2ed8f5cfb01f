//! Calendar quotas end to end, with the real binary, real Redis (one server and a Cluster) and
//! real clients: three instances admit exactly a daily quota of 50 next to a bucket of 20 at
//! 10/s, refused requests consume neither, and the headers count down to the next local
//! midnight of the policy's zone (two zones); on the memory store, an operator's quota
//! override and a bad one.

use crate::common;

use common::cluster::RedisCluster;
use common::control_api::{admin_tables, control};
use common::load::hammer;
use common::redis::RedisServer;
use common::wait::eventually;
use common::{client_from, Proxy, Upstream};
use jiff::{tz::TimeZone, ToSpan, Zoned};
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

/// A burst bucket per API key on every path, and a daily quota per API key on `/berlin` and
/// on `/kolkata`, each in its zone.
const POLICIES: &str = r#"
[identity]
sources = ["header:x-api-key"]

[[policy]]
name = "burst"
capacity = 20
rate = "10/s"

[[policy]]
name = "daily-berlin"
quota = 50
period = "day"
timezone = "Europe/Berlin"
match = { path_prefix = "/berlin" }

[[policy]]
name = "daily-kolkata"
quota = 50
period = "day"
timezone = "Asia/Kolkata"
match = { path_prefix = "/kolkata" }
"#;

/// Seconds from now to the next midnight in `zone`, and that midnight as RFC 3339.
fn next_midnight(zone: &str) -> (f64, String) {
    let now = Zoned::now().with_time_zone(TimeZone::get(zone).unwrap());
    let midnight = now
        .date()
        .checked_add(1.day())
        .unwrap()
        .to_zoned(now.time_zone().clone())
        .unwrap();
    let seconds =
        (midnight.timestamp().as_microsecond() - now.timestamp().as_microsecond()) as f64 / 1e6;
    (
        seconds,
        midnight.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string(),
    )
}

/// A GET of `path` through `proxy` by the caller with API key `key`.
fn get(proxy: &Proxy, path: &str, key: &str) -> reqwest::blocking::Response {
    client_from("127.0.0.1")
        .get(proxy.url(path))
        .header("x-api-key", key)
        .send()
        .unwrap()
}

/// How caller `key` stands under `policy`, by inspect.
fn standing(proxy: &Proxy, key: &str, policy: &str) -> Value {
    let path = format!("/v1/callers?source=header:x-api-key&value={key}");
    let (status, seen) = control(proxy, "GET", &path, None);
    assert_eq!(status, 200, "{seen}");
    seen["policies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["policy"] == policy)
        .cloned()
        .unwrap_or_else(|| panic!("{policy} in {seen}"))
}

/// Floods `path` with `key` from every proxy, then checks: exactly 50 admitted, a refusal
/// counting down to the zone's next midnight, and refusals that took nothing.
fn exactly_the_quota(proxies: &[Proxy], path: &str, key: &str, policy: &str, zone: &str) {
    let urls: Vec<String> = proxies.iter().map(|p| p.url(path)).collect();
    let report = hammer(
        &urls,
        2,
        Duration::from_secs(6),
        Duration::ZERO,
        &[("x-api-key", key)],
    );
    assert_eq!(
        report.count(200),
        50,
        "exactly the quota across the fleet: {:?}",
        report.statuses
    );
    assert_eq!(report.count(200) + report.count(429), report.total());

    let refused = get(&proxies[1], path, key);
    let (to_midnight, midnight) = next_midnight(zone);
    assert_eq!(refused.status(), 429);
    let header = |name: &str| refused.headers()[name].to_str().unwrap().to_owned();
    let retry_after: f64 = header("retry-after").parse().unwrap();
    assert!(
        (retry_after - to_midnight).abs() <= 2.0,
        "Retry-After {retry_after}, {to_midnight} s to midnight in {zone}"
    );
    assert_eq!(
        header("ratelimit-policy"),
        format!("\"{policy}\";q=50"),
        "no window"
    );
    let ratelimit = header("ratelimit");
    let t: f64 = ratelimit.rsplit("t=").next().unwrap().parse().unwrap();
    assert!(
        ratelimit.starts_with(&format!("\"{policy}\";r=0;t=")),
        "{ratelimit}"
    );
    assert!(
        (t - to_midnight).abs() <= 2.0,
        "t={t}, {to_midnight} s to midnight in {zone}"
    );
    let body: Value = refused.json().unwrap();
    assert_eq!(body["resets_at"], midnight.as_str(), "{body}");

    // Once the burst bucket is full again, 25 refusals by the quota take none of its tokens.
    std::thread::sleep(Duration::from_millis(2_100));
    for _ in 0..25 {
        let status = get(&proxies[0], path, key).status();
        assert_eq!(status, 429);
    }
    let burst = standing(&proxies[2], key, "burst");
    assert_eq!(
        burst["remaining"], 20,
        "refused by the quota, nothing taken: {burst}"
    );
    let quota = standing(&proxies[2], key, policy);
    assert_eq!(
        (
            quota["quota"].as_u64(),
            quota["used"].as_u64(),
            quota["remaining"].as_u64()
        ),
        (Some(50), Some(50), Some(0)),
        "{quota}"
    );
    assert_eq!(quota["timezone"], zone);
    assert_eq!(quota["resets_at"], midnight.as_str());

    // An operator's reset through one instance gives the caller its quota back on the others
    // within a second, though they refused it until midnight a moment ago.
    for other in &proxies[1..] {
        let status = get(other, path, key).status();
        assert_eq!(status, 429, "refused until midnight, and remembered");
    }
    let reset = json!({ "source": "header:x-api-key", "value": key, "policy": policy });
    assert_eq!(
        control(&proxies[0], "POST", "/v1/callers/reset", Some(reset)).0,
        200
    );
    let reset_at = Instant::now();
    for other in &proxies[1..] {
        // A refusal by the quota takes nothing, so asking again until served costs nothing.
        let left = Duration::from_millis(1_100).saturating_sub(reset_at.elapsed());
        let served = eventually(left, || get(other, path, key).status() == 200);
        assert!(served, "reset applies on every instance");
    }
}

fn fleet_of_three(upstream: &Upstream, store: &str, dir: &Path) -> Vec<Proxy> {
    let config = format!("{store}\n{POLICIES}");
    let admin = admin_tables(dir, "");
    let proxies: Vec<Proxy> = (0..3)
        .map(|_| Proxy::start_with_tables(&[&upstream.addr], "", &admin, &config))
        .collect();
    for p in &proxies {
        let warm = get(p, "/", "warm-up");
        assert_eq!(warm.status(), 200);
    }
    proxies
}

#[test]
fn three_instances_on_redis_admit_exactly_a_daily_quota_in_two_zones() {
    let redis = RedisServer::start();
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let store = format!("[store]\nkind = \"redis\"\nurl = \"{}\"\n", redis.url());
    let proxies = fleet_of_three(&upstream, &store, dir.path());
    exactly_the_quota(
        &proxies,
        "/berlin/x",
        "key-one",
        "daily-berlin",
        "Europe/Berlin",
    );
    exactly_the_quota(
        &proxies,
        "/kolkata/x",
        "key-two",
        "daily-kolkata",
        "Asia/Kolkata",
    );
}

#[test]
fn three_instances_on_a_cluster_admit_exactly_a_daily_quota() {
    let cluster = RedisCluster::start(3, 0);
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let nodes: Vec<String> = cluster.seeds().iter().map(|s| format!("\"{s}\"")).collect();
    let store = format!(
        "[store]\nkind = \"redis\"\nnodes = [{}]\n",
        nodes.join(", ")
    );
    let proxies = fleet_of_three(&upstream, &store, dir.path());
    exactly_the_quota(
        &proxies,
        "/kolkata/x",
        "key-three",
        "daily-kolkata",
        "Asia/Kolkata",
    );
}

#[test]
fn on_the_memory_store_an_override_raises_one_callers_quota_and_a_bad_one_says_which_field() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let config = "[identity]\nsources = [\"header:x-api-key\"]\n\n\
                  [[policy]]\nname = \"monthly\"\nquota = 5\nperiod = \"month\"\n";
    let proxy =
        Proxy::start_with_tables(&[&upstream.addr], "", &admin_tables(dir.path(), ""), config);
    let admitted = (0..8)
        .filter(|_| get(&proxy, "/", "small").status() == 200)
        .count();
    assert_eq!(admitted, 5);
    let refused = get(&proxy, "/", "small");
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.headers()["ratelimit-policy"], "\"monthly\";q=5");

    let (status, body) = control(
        &proxy,
        "POST",
        "/v1/overrides",
        Some(json!({
        "policy": "monthly", "source": "header:x-api-key", "value": "big",
        "capacity": 100, "rate": "1/s"})),
    );
    assert_eq!(
        (status, &body["field"]),
        (400, &json!("capacity")),
        "{body}"
    );
    let (status, body) = control(
        &proxy,
        "POST",
        "/v1/overrides",
        Some(json!({
        "policy": "monthly", "source": "header:x-api-key", "value": "big", "quota": 0})),
    );
    assert_eq!((status, &body["field"]), (400, &json!("quota")), "{body}");
    let (_, listed) = control(&proxy, "GET", "/v1/overrides", None);
    assert_eq!(listed["overrides"], json!([]), "a bad call changes nothing");

    let (status, body) = control(
        &proxy,
        "POST",
        "/v1/overrides",
        Some(json!({
        "policy": "monthly", "source": "header:x-api-key", "value": "big", "quota": 12,
        "ttl": "1h"})),
    );
    assert_eq!(status, 201, "{body}");
    let admitted = (0..15)
        .filter(|_| get(&proxy, "/", "big").status() == 200)
        .count();
    assert_eq!(admitted, 12, "the override's quota");
    let (_, listed) = control(&proxy, "GET", "/v1/overrides", None);
    assert_eq!(listed["overrides"][0]["quota"], 12, "{listed}");
    let allowed = get(&proxy, "/", "other");
    assert_eq!(allowed.headers()["ratelimit-policy"], "\"monthly\";q=5");
    let t: u64 = allowed.headers()["ratelimit"]
        .to_str()
        .unwrap()
        .rsplit("t=")
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let now = Zoned::now().with_time_zone(TimeZone::UTC);
    let first_of_next = now
        .date()
        .first_of_month()
        .checked_add(1.month())
        .unwrap()
        .to_zoned(TimeZone::UTC)
        .unwrap();
    let expected = first_of_next.timestamp().as_second() - now.timestamp().as_second();
    assert!(
        (t as i64 - expected).abs() <= 2,
        "t={t}, {expected} s to the 1st, UTC"
    );
}
