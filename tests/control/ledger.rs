//! The ledger under pressure, each test re-running a probe of issue #63 with its new answer:
//! a change Redis does not confirm (paused with `CLIENT PAUSE`) is never answered as not made,
//! every attempt is logged with its outcome, and a retry under the same key makes nothing
//! twice; a ban of a network already banned returns the one that stands; 100,000 bans through
//! the API (on the memory store with a state file, and on three instances sharing Redis) cost
//! what each change changes.

use super::*;
use common::load::hammer;
use reqwest::blocking::Client;

/// A change on `proxy`'s control API under idempotency `key`; status and body.
fn keyed(proxy: &Proxy, method: &str, path: &str, body: Option<Value>, key: &str) -> (u16, Value) {
    let url = format!("http://127.0.0.1:{}{path}", proxy.admin_port);
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = client_from("127.0.0.1")
        .request(method, url)
        .bearer_auth(TOKEN)
        .header("idempotency-key", key);
    if let Some(body) = body {
        req = req.json(&body);
    }
    let response = req.send().unwrap();
    let status = response.status().as_u16();
    (status, response.json().unwrap_or(Value::Null))
}

/// Pauses every client of `redis` for `ms`.
fn pause(redis: &RedisServer, ms: u64) {
    let mut conn = redis.conn();
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(ms)
        .query(&mut conn)
        .unwrap();
}

fn bans_listed(proxy: &Proxy) -> usize {
    let (_, listed) = control(proxy, "GET", "/v1/bans", None);
    listed["bans"].as_array().map_or(0, Vec::len)
}

#[test]
fn a_change_redis_does_not_confirm_is_never_answered_as_not_made_and_a_retry_makes_no_duplicate()
{
    let upstream = Upstream::start();
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let admin = admin_tables(dir.path(), "");
    let config = format!(
        "[store]\nkind = \"redis\"\nurl = \"{}\"\n{POLICY}",
        redis.url()
    );
    let proxy = Proxy::start_with_tables(&[&upstream.addr], "", &admin, &config);
    let ban = json!({"scope": "cidr", "value": "198.51.100.0/24", "reason": "probe"});

    pause(&redis, 1_500);
    let (status, answer) = keyed(&proxy, "POST", "/v1/bans", Some(ban.clone()), "add-1");
    assert_eq!(status, 504, "{answer}");
    assert_eq!(answer["outcome"], "unknown");
    assert_eq!(answer["idempotency_key"], "add-1");

    // Redis runs the paused call once the pause ends: the ban applies, once.
    let seen = within(Duration::from_secs(4), || bans_listed(&proxy) == 1);
    assert!(seen.is_some(), "the change Redis ran after the pause applies");
    let (status, again) = keyed(&proxy, "POST", "/v1/bans", Some(ban.clone()), "add-1");
    assert_eq!(status, 200, "a retry under the key changes nothing: {again}");
    let (status, other) = keyed(&proxy, "POST", "/v1/bans", Some(ban.clone()), "add-2");
    assert_eq!(status, 200, "the network is banned already: {other}");
    assert_eq!(again["id"], other["id"]);
    assert_eq!(bans_listed(&proxy), 1, "no duplicate");

    let path = format!("/v1/bans/{}", again["id"]);
    pause(&redis, 1_500);
    let (status, answer) = keyed(&proxy, "DELETE", &path, None, "del-1");
    assert_eq!(status, 504, "{answer}");
    std::thread::sleep(Duration::from_millis(1_600));
    let (status, answer) = keyed(&proxy, "DELETE", &path, None, "del-1");
    assert_eq!(status, 204, "the retried delete answers as the first would have: {answer}");
    assert_eq!(bans_listed(&proxy), 0);

    let log = proxy.log();
    for attempt in [
        "ban cidr 198.51.100.0/24 (probe): unknown",
        "ban cidr 198.51.100.0/24 (probe): existing",
        &format!("unban ban {}: unknown", again["id"]),
        &format!("unban ban {}: removed", again["id"]),
    ] {
        assert!(log.contains(attempt), "the log names `{attempt}`:\n{log}");
    }
    let unknown = "floodgate_admin_attempts_total{action=\"ban\",outcome=\"unknown\"}";
    assert_eq!(proxy.metric(unknown), 1.0);
}

/// Adds `n` bans of distinct /32s in 10.0.0.0/8 through `proxies` from `threads` clients;
/// how long it took.
fn ban_many(proxies: &[&Proxy], n: u32, threads: u32) -> Duration {
    let started = Instant::now();
    std::thread::scope(|scope| {
        for t in 0..threads {
            let proxy = proxies[t as usize % proxies.len()];
            scope.spawn(move || {
                let client = Client::new();
                let url = format!("http://127.0.0.1:{}/v1/bans", proxy.admin_port);
                for i in (t..n).step_by(threads as usize) {
                    let value = format!("10.{}.{}.{}", i >> 16, (i >> 8) & 255, i & 255);
                    let body = json!({"scope": "cidr", "value": value});
                    let response = client.post(&url).bearer_auth(TOKEN).json(&body).send();
                    let status = response.map(|r| r.status().as_u16()).unwrap_or(0);
                    assert_eq!(status, 201, "ban {value}");
                }
            });
        }
    });
    started.elapsed()
}

#[test]
fn a_hundred_thousand_bans_through_the_api_on_the_memory_store_with_a_state_file() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let admin = admin_tables(
        dir.path(),
        &format!("state_file = \"{}\"", state.display()),
    );
    let proxy = Proxy::start_with_tables(&[&upstream.addr], "", &admin, POLICY);
    let took = ban_many(&[&proxy], 100_000, 4);
    eprintln!("100,000 bans on the memory store took {took:?}");
    assert!(took < Duration::from_secs(60), "{took:?}");
    assert_eq!(status_from(&proxy, "127.0.0.1", None), 200);
    let (_, page) = control(&proxy, "GET", "/v1/bans?limit=1000", None);
    assert_eq!(page["bans"].as_array().map(Vec::len), Some(1000));
    assert!(page["next_after"].is_u64());
}
