//! The control API end to end, with the real binary and real clients: bans (by network, from a
//! second loopback address, and by caller), overrides, reset and inspect, on the memory store
//! (kept across a restart by `admin.state_file`) and on three instances sharing one real Redis
//! (a change made on one applies on all within a second); an override shrinking a bucket below
//! the policy's cost answers without a Retry-After. No raw caller value is ever stored, logged
//! or returned.

use crate::common;
use common::PER_USER as POLICY;

mod offenders;
mod probes;

use common::control_api::{admin_tables, call, control, TOKEN};
use common::redis::RedisServer;
use common::wait::within;
use common::{client_from, status_from, Proxy, Upstream};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const KEY: &str = "alice-key-raw-value";

/// How many of `n` requests by `key`, spread over `proxies` in turn, were allowed.
fn burst(proxies: &[&Proxy], key: &str, n: usize) -> usize {
    (0..n)
        .filter(|i| status_from(proxies[i % proxies.len()], "127.0.0.1", Some(key)) == 200)
        .count()
}

/// Waits until every instance of `fleet` has read the control changes made so far: changes
/// are read in order, so once a marker ban made after them is listed by each instance, they
/// have all been applied (resets forgotten, overrides in force). The marker then goes.
fn read_by_all(fleet: &[Proxy]) {
    let marker = json!({"scope": "cidr", "value": "192.0.2.1/32", "reason": "marker"});
    let (status, made) = control(&fleet[0], "POST", "/v1/bans", Some(marker));
    assert_eq!(status, 201, "{made}");
    let id = made["id"].clone();
    for proxy in fleet {
        let listed = within(Duration::from_secs(2), || {
            let (_, bans) = control(proxy, "GET", "/v1/bans", None);
            bans["bans"]
                .as_array()
                .is_some_and(|bans| bans.iter().any(|ban| ban["id"] == id))
        });
        assert!(
            listed.is_some(),
            "every instance reads the changes within 2 s"
        );
    }
    let gone = control(&fleet[0], "DELETE", &format!("/v1/bans/{id}"), None).0;
    assert_eq!(gone, 204);
}

/// The config of a proxy whose store is `redis`, with `policies`.
fn on_redis(redis: &RedisServer, policies: &str) -> String {
    format!(
        "[store]\nkind = \"redis\"\nurl = \"{}\"\n{policies}",
        redis.url()
    )
}

#[test]
fn without_a_token_file_the_control_api_is_off_and_a_wrong_token_is_401() {
    let upstream = Upstream::start();
    let off = Proxy::start(&[&upstream.addr], POLICY);
    let response = call(&off, "GET", "/v1/bans", None, Some(TOKEN));
    assert_eq!(response.status(), 403);
    assert!(response.text().unwrap().contains("admin.token_file"));

    let dir = tempfile::tempdir().unwrap();
    let on = Proxy::start_with_tables(&[&upstream.addr], "", &admin_tables(dir.path(), ""), POLICY);
    for token in [None, Some("wrong-0123456789abcdef")] {
        let response = call(&on, "GET", "/v1/bans", None, token);
        assert_eq!(response.status(), 401);
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
    }
    assert_eq!(on.metric("floodgate_admin_unauthorized_total"), 2.0);
    assert!(
        on.admin("/metrics").unwrap().status() == 200,
        "metrics stay open"
    );
    assert!(!on.log().contains("wrong-0123456789abcdef"));
}

#[test]
fn bad_calls_change_nothing_and_say_which_field() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    // A `deny` policy takes from no bucket: nothing overrides, inspects or resets one.
    let config = format!(
        "{POLICY}\n[[policy]]\nname = \"blocked\"\naction = \"deny\"\nmatch = {{ path_prefix = \"/blocked\" }}\n"
    );
    let proxy = Proxy::start_with_tables(
        &[&upstream.addr],
        "",
        &admin_tables(dir.path(), ""),
        &config,
    );
    let cases = [
        (
            json!({"scope": "cidr", "value": "10.0.0.0/33"}),
            400,
            "value",
        ),
        (
            json!({"scope": "cidr", "value": "10.0.0.0/8", "ttl": "soon"}),
            400,
            "ttl",
        ),
        (json!({"scope": "planet", "value": "x"}), 400, "scope"),
        (
            json!({"scope": "caller", "source": "cookie:sid", "value": "x"}),
            404,
            "source",
        ),
        (
            json!({"scope": "cidr", "value": "10.0.0.0/8", "colour": "red"}),
            400,
            "colour",
        ),
    ];
    for (body, status, field) in cases {
        let (got, problem) = control(&proxy, "POST", "/v1/bans", Some(body.clone()));
        assert_eq!(
            (got, problem["field"].as_str()),
            (status, Some(field)),
            "{body}"
        );
    }
    let overrides = [
        (
            json!({"policy": "nope", "source": "ip", "value": "127.0.0.1", "capacity": 5, "rate": "1/s"}),
            404,
            "policy",
        ),
        (
            json!({"policy": "blocked", "source": "ip", "value": "127.0.0.1", "capacity": 5, "rate": "1/s"}),
            400,
            "policy",
        ),
        (
            json!({"policy": "per-user", "source": "ip", "value": "127.0.0.1", "capacity": 0, "rate": "1/s"}),
            400,
            "capacity",
        ),
        (
            json!({"policy": "per-user", "source": "ip", "value": "127.0.0.1", "capacity": -3, "rate": "1/s"}),
            400,
            "capacity",
        ),
        (
            json!({"policy": "per-user", "source": "ip", "value": "127.0.0.1", "capacity": 5, "rate": "fast"}),
            400,
            "rate",
        ),
    ];
    for (body, status, field) in overrides {
        let (got, problem) = control(&proxy, "POST", "/v1/overrides", Some(body.clone()));
        assert_eq!(
            (got, problem["field"].as_str()),
            (status, Some(field)),
            "{body}"
        );
    }
    let inspect_blocked = "/v1/callers?source=ip&value=127.0.0.1&policy=blocked";
    let (got, problem) = control(&proxy, "GET", inspect_blocked, None);
    assert_eq!((got, problem["field"].as_str()), (400, Some("policy")));
    let reset = json!({"source": "ip", "value": "127.0.0.1", "policy": "blocked"});
    let (got, problem) = control(&proxy, "POST", "/v1/callers/reset", Some(reset));
    assert_eq!((got, problem["field"].as_str()), (400, Some("policy")));
    let (_, inspected) = control(&proxy, "GET", "/v1/callers?source=ip&value=127.0.0.1", None);
    let names: Vec<&str> = inspected["policies"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["policy"].as_str())
        .collect();
    assert_eq!(
        names,
        ["per-user"],
        "only a limit policy has a bucket to show"
    );
    let big = json!({"scope": "cidr", "value": "10.0.0.0/8", "reason": "x".repeat(70_000)});
    assert_eq!(control(&proxy, "POST", "/v1/bans", Some(big)).0, 413);
    assert_eq!(control(&proxy, "PUT", "/v1/bans", None).0, 405);
    assert_eq!(control(&proxy, "DELETE", "/v1/bans/999", None).0, 404);
    let (_, listed) = control(&proxy, "GET", "/v1/bans", None);
    assert_eq!(listed["bans"], json!([]), "nothing was half-applied");
    assert_eq!(
        control(&proxy, "GET", "/v1/overrides", None).1["overrides"],
        json!([])
    );
}

#[test]
fn memory_store_bans_overrides_reset_and_inspect_and_a_restart_keeps_them() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("control.json");
    let admin = admin_tables(
        dir.path(),
        &format!("state_file = \"{}\"\n", state.display()),
    );
    let allow = "[access]\nallow = [\"cidr:127.0.0.2/32\"]\n";
    let config = format!("{POLICY}\n{allow}");
    let proxy = Proxy::start_with_tables(&[&upstream.addr], "", &admin, &config);

    // A network ban refuses 127.0.0.2 (though allow-listed) and not 127.0.0.1.
    let (status, made) = control(
        &proxy,
        "POST",
        "/v1/bans",
        Some(json!({
        "scope": "cidr", "value": "127.0.0.2/32", "ttl": "1h", "reason": "scraping"})),
    );
    assert_eq!(status, 201);
    assert!(made["expires_in"].as_u64().unwrap() > 3590);
    let response = client_from("127.0.0.2")
        .get(proxy.url("/x"))
        .send()
        .unwrap();
    assert_eq!(response.status(), 403);
    let retry: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry > 3590);
    let problem: Value = response.json().unwrap();
    assert_eq!(problem["banned"], true);
    assert_eq!(status_from(&proxy, "127.0.0.1", None), 200);

    // A caller ban and an override from 5 to 50.
    let (status, _) = control(
        &proxy,
        "POST",
        "/v1/bans",
        Some(json!({
        "scope": "caller", "source": "header:x-api-key", "value": "mallory-key"})),
    );
    assert_eq!(status, 201);
    assert_eq!(status_from(&proxy, "127.0.0.1", Some("mallory-key")), 403);
    assert_eq!(burst(&[&proxy], KEY, 8), 5);
    let (status, _) = control(
        &proxy,
        "POST",
        "/v1/overrides",
        Some(json!({
        "policy": "per-user", "source": "header:x-api-key", "value": KEY,
        "capacity": 50, "rate": "1/m", "ttl": "24h", "reason": "customer upgrade"})),
    );
    assert_eq!(status, 201);
    let response = proxy.get("/x", &[("x-api-key", KEY)]);
    assert!(response.headers()["ratelimit-policy"]
        .to_str()
        .unwrap()
        .contains("q=50"));
    assert_eq!(
        1 + burst(&[&proxy], KEY, 60),
        50,
        "exactly the override's capacity"
    );

    // Inspect takes nothing and matches what the next request sees; reset refills.
    let path = format!("/v1/callers?source=header:x-api-key&value={KEY}");
    for _ in 0..2 {
        let (status, seen) = control(&proxy, "GET", &path, None);
        assert_eq!(status, 200);
        let policy = &seen["policies"][0];
        assert_eq!(
            (policy["remaining"].as_u64(), policy["capacity"].as_u64()),
            (Some(0), Some(50))
        );
        assert!(policy["override"]["id"].is_u64());
    }
    assert_eq!(status_from(&proxy, "127.0.0.1", Some(KEY)), 429);
    let (status, _) = control(
        &proxy,
        "POST",
        "/v1/callers/reset",
        Some(json!({
        "source": "header:x-api-key", "value": KEY})),
    );
    assert_eq!(status, 200);
    assert_eq!(
        control(&proxy, "GET", &path, None).1["policies"][0]["remaining"],
        50
    );
    assert_eq!(burst(&[&proxy], KEY, 55), 50);

    // A restart keeps the bans and the override (state_file).
    drop(proxy);
    let saved = std::fs::read_to_string(&state).unwrap();
    assert!(
        !saved.contains(KEY) && !saved.contains("mallory-key"),
        "digests only"
    );
    let proxy = Proxy::start_with_tables(&[&upstream.addr], "", &admin, &config);
    assert_eq!(status_from(&proxy, "127.0.0.2", None), 403);
    assert_eq!(status_from(&proxy, "127.0.0.1", Some("mallory-key")), 403);
    let (_, listed) = control(&proxy, "GET", "/v1/overrides", None);
    assert_eq!(listed["overrides"][0]["capacity"], 50);
    let (_, bans) = control(&proxy, "GET", "/v1/bans?limit=1", None);
    let first = bans["bans"][0]["id"].as_u64().unwrap();
    assert_eq!(bans["next_after"], first);
    assert_eq!(
        control(&proxy, "DELETE", &format!("/v1/bans/{first}"), None).0,
        204
    );
    assert_eq!(
        status_from(&proxy, "127.0.0.2", None),
        200,
        "unbanned, and allow-listed"
    );
    assert_eq!(
        proxy.metric("floodgate_admin_changes_total{action=\"unban\"}"),
        1.0
    );
    let log = proxy.log();
    assert!(!log.contains(KEY) && !log.contains("mallory-key"));
}

#[test]
fn three_instances_on_one_redis_apply_every_change_within_a_second() {
    let upstream = Upstream::start();
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let admin = admin_tables(dir.path(), "");
    let config = on_redis(&redis, POLICY);
    let start = || Proxy::start_with_tables(&[&upstream.addr], "", &admin, &config);
    let mut fleet = vec![start(), start(), start()];

    // A ban made on one refuses on all three within 1 s; its deletion serves again within 1 s.
    let (status, made) = control(
        &fleet[0],
        "POST",
        "/v1/bans",
        Some(json!({
        "scope": "cidr", "value": "127.0.0.2", "reason": "abuse"})),
    );
    assert_eq!(status, 201);
    assert_eq!(made["expires_in"], Value::Null);
    for proxy in &fleet {
        let took = within(Duration::from_secs(1), || {
            status_from(proxy, "127.0.0.2", None) == 403
        });
        assert!(took.is_some(), "the ban reached every instance within 1 s");
    }
    let id = made["id"].as_u64().unwrap();
    assert_eq!(
        control(&fleet[1], "DELETE", &format!("/v1/bans/{id}"), None).0,
        204
    );
    for proxy in &fleet {
        // Served again (or throttled: polling for the ban took from the address's bucket).
        let took = within(Duration::from_secs(1), || {
            status_from(proxy, "127.0.0.2", None) != 403
        });
        assert!(
            took.is_some(),
            "the deletion reached every instance within 1 s"
        );
    }

    // An override from 5 to 50 admits exactly 50 across the three.
    let (status, _) = control(
        &fleet[2],
        "POST",
        "/v1/overrides",
        Some(json!({
        "policy": "per-user", "source": "header:x-api-key", "value": KEY,
        "capacity": 50, "rate": "1/m"})),
    );
    assert_eq!(status, 201);
    read_by_all(&fleet);
    let all: Vec<&Proxy> = fleet.iter().collect();
    assert_eq!(burst(&all, KEY, 60), 50);

    // Inspect matches and takes nothing; reset refills for the whole fleet.
    let path = format!("/v1/callers?source=header:x-api-key&value={KEY}");
    let (_, seen) = control(&fleet[1], "GET", &path, None);
    assert_eq!(seen["policies"][0]["remaining"], 0);
    assert_eq!(status_from(&fleet[0], "127.0.0.1", Some(KEY)), 429);
    assert_eq!(
        control(
            &fleet[0],
            "POST",
            "/v1/callers/reset",
            Some(json!({
        "source": "header:x-api-key", "value": KEY, "policy": "per-user"}))
        )
        .0,
        200
    );
    read_by_all(&fleet);
    assert_eq!(
        control(&fleet[2], "GET", &path, None).1["policies"][0]["remaining"],
        50
    );
    assert_eq!(burst(&all, KEY, 55), 50);

    // A ban and the override survive a restart of an instance and a reload.
    control(
        &fleet[0],
        "POST",
        "/v1/bans",
        Some(json!({
        "scope": "caller", "source": "header:x-api-key", "value": "mallory-key", "ttl": "1h"})),
    );
    fleet[2] = start();
    fleet[1].reload("success");
    for proxy in &fleet {
        let took = within(Duration::from_secs(1), || {
            status_from(proxy, "127.0.0.1", Some("mallory-key")) == 403
        });
        assert!(took.is_some());
        let (_, listed) = control(proxy, "GET", "/v1/overrides", None);
        assert_eq!(listed["overrides"].as_array().map(Vec::len), Some(1));
    }

    // No raw caller value in Redis, in any answer or in any log.
    let mut conn = redis.conn();
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut conn).unwrap();
    for key in &keys {
        let dump: Vec<u8> = redis::cmd("DUMP")
            .arg(key)
            .query(&mut conn)
            .unwrap_or_default();
        let text = format!("{key} {}", String::from_utf8_lossy(&dump));
        assert!(
            !text.contains(KEY) && !text.contains("mallory-key"),
            "{key}"
        );
    }
    for proxy in &fleet {
        let log = proxy.log();
        assert!(!log.contains(KEY) && !log.contains("mallory-key"));
        let (_, bans) = control(proxy, "GET", "/v1/bans", None);
        assert!(!bans.to_string().contains("mallory-key"));
    }
}

#[test]
fn while_redis_is_down_known_bans_keep_applying_and_changes_answer_503() {
    let upstream = Upstream::start();
    let mut redis = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let admin = admin_tables(dir.path(), "");
    let config = on_redis(&redis, POLICY);
    let proxy = Proxy::start_with_tables(&[&upstream.addr], "", &admin, &config);
    let ban = json!({"scope": "cidr", "value": "127.0.0.2/32", "ttl": "1h"});
    assert_eq!(
        control(&proxy, "POST", "/v1/bans", Some(ban.clone())).0,
        201
    );

    redis.kill();
    // The proxy has seen Redis go once a refresh of its bans failed (a read: it says so, not
    // that a change may have been made).
    let said = "bans and overrides cannot be read (the control state cannot be read now";
    assert!(within(Duration::from_secs(3), || proxy.log().contains(said)).is_some());
    for _ in 0..5 {
        let started = Instant::now();
        assert_eq!(status_from(&proxy, "127.0.0.2", None), 403);
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "no request waits for Redis"
        );
    }
    let (status, problem) = control(
        &proxy,
        "POST",
        "/v1/bans",
        Some(json!({
        "scope": "cidr", "value": "198.51.100.0/24"})),
    );
    assert_eq!(status, 503, "{problem}");
    assert_eq!(
        control(&proxy, "GET", "/v1/bans", None).1["bans"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    assert!(
        !proxy.log().contains("confirm the change"),
        "{}",
        proxy.log()
    );

    redis.restart();
    let took = within(Duration::from_secs(5), || {
        control(
            &proxy,
            "POST",
            "/v1/bans",
            Some(json!({
            "scope": "cidr", "value": "198.51.100.0/24"})),
        )
        .0 == 201
    });
    assert!(took.is_some(), "changes are taken again once Redis is back");
}

mod ledger;

#[test]
fn an_override_below_the_policys_cost_is_refused_without_a_retry_after_at_every_front_door() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let admin = admin_tables(dir.path(), "");
    let check = common::free_port();
    let config = format!(
        "[identity]\nsources = [\"header:x-api-key\"]\n\n\
         [[policy]]\nname = \"per-user\"\ncapacity = 5\nrate = \"1/m\"\ncost = 3\n\n\
         [check]\nlisten = \"127.0.0.1:{check}\"\n"
    );
    let proxy = Proxy::start_with_tables(&[&upstream.addr], "", &admin, &config);
    let (status, _) = control(
        &proxy,
        "POST",
        "/v1/overrides",
        Some(json!({
        "policy": "per-user", "source": "header:x-api-key", "value": KEY,
        "capacity": 2, "rate": "1/m", "reason": "shrunk below the cost"})),
    );
    assert_eq!(status, 201);
    let through_check = client_from("127.0.0.1")
        .get(format!("http://127.0.0.1:{check}/check/x"))
        .header("x-api-key", KEY)
        .send()
        .unwrap();
    for response in [proxy.get("/x", &[("x-api-key", KEY)]), through_check] {
        assert_eq!(response.status(), 429);
        let headers = response.headers();
        assert!(headers.get("retry-after").is_none(), "{headers:?}");
        assert_eq!(headers["ratelimit"], "\"per-user\";r=0");
        assert_eq!(headers["ratelimit-policy"], "\"per-user\";q=2;w=120");
        let problem: Value = response.json().unwrap();
        assert_eq!(
            (problem["cost"].as_u64(), problem["capacity"].as_u64()),
            (Some(3), Some(2))
        );
        let detail = problem["detail"].as_str().unwrap();
        assert!(detail.contains("can never pass"), "{detail}");
    }
    assert_eq!(status_from(&proxy, "127.0.0.1", Some("bob-key")), 200);
}

#[test]
fn a_caller_named_by_its_digest_is_banned_overridden_inspected_and_reset_like_by_value() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let proxy =
        Proxy::start_with_tables(&[&upstream.addr], "", &admin_tables(dir.path(), ""), POLICY);
    let by_value = format!("/v1/callers?source=header:x-api-key&value={KEY}");
    let (_, inspected) = control(&proxy, "GET", &by_value, None);
    let digest = inspected["policies"][0]["caller"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(digest.len(), 32);

    // The digest /offenders shows is the one the control API takes.
    assert_eq!(burst(&[&proxy], KEY, 8), 5);
    let offenders: Value = proxy.admin("/offenders").unwrap().json().unwrap();
    let row = &offenders["offenders"][0];
    assert_eq!(row["caller"], digest.as_str());
    assert_eq!(row["source"], "header:x-api-key");
    assert_eq!(row["identity"], &digest[..16], "the old field stays");

    let by_digest = format!("/v1/callers?source=header:x-api-key&caller={digest}");
    let (status, shown) = control(&proxy, "GET", &by_digest, None);
    assert_eq!(
        (status, &shown["policies"][0]["caller"]),
        (200, &json!(digest))
    );

    let ban = json!({"scope": "caller", "source": "header:x-api-key", "caller": digest.to_uppercase(), "ttl": "1h"});
    let (status, made) = control(&proxy, "POST", "/v1/bans", Some(ban));
    assert_eq!((status, &made["caller"]), (201, &json!(digest)));
    assert!(within(Duration::from_secs(2), || status_from(
        &proxy,
        "127.0.0.1",
        Some(KEY)
    ) == 403)
    .is_some());
    let id = made["id"].as_u64().unwrap();
    assert_eq!(
        control(&proxy, "DELETE", &format!("/v1/bans/{id}"), None).0,
        204
    );

    let raise = json!({"policy": "per-user", "source": "header:x-api-key", "caller": digest, "capacity": 40, "rate": "1/s", "ttl": "1h"});
    assert_eq!(control(&proxy, "POST", "/v1/overrides", Some(raise)).0, 201);
    assert!(within(Duration::from_secs(2), || status_from(
        &proxy,
        "127.0.0.1",
        Some(KEY)
    ) == 200)
    .is_some());
    let reset = json!({"source": "header:x-api-key", "caller": digest});
    let (status, done) = control(&proxy, "POST", "/v1/callers/reset", Some(reset));
    assert_eq!((status, &done["reset"]), (200, &json!(["per-user"])));
    assert!(proxy
        .log()
        .contains("control API: ops ban caller header:x-api-key"));

    let bad = [
        json!({"scope": "caller", "source": "header:x-api-key", "caller": "abc"}),
        json!({"scope": "caller", "source": "header:x-api-key", "caller": digest, "value": KEY}),
        json!({"scope": "cidr", "caller": digest}),
    ];
    for body in bad {
        let (status, problem) = control(&proxy, "POST", "/v1/bans", Some(body.clone()));
        assert_eq!(
            (status, problem["field"].as_str()),
            (400, Some("caller")),
            "{body}"
        );
    }
    let (status, problem) = control(
        &proxy,
        "POST",
        "/v1/bans",
        Some(json!({"scope": "caller", "source": "header:x-api-key"})),
    );
    assert_eq!((status, problem["field"].as_str()), (400, Some("value")));
}

/// The `POST` examples of `doc` whose reply is shown whole (no `…`): the path, the body sent
/// and the reply shown.
fn whole_examples(doc: &str) -> Vec<(String, Value, Value)> {
    let mut examples = Vec::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let Some(call) = line.split("-X POST $FG").nth(1) else {
            continue;
        };
        let path = call.split_whitespace().next().unwrap().to_owned();
        let mut text = line.to_owned();
        while text.matches('\'').count() < 2 {
            text.push_str(lines.next().expect("the body's closing quote"));
        }
        let body = text.split('\'').nth(1).unwrap();
        let reply = lines.next().unwrap_or_default();
        let shown = reply.strip_prefix("# ").filter(|r| !r.contains('…'));
        if let Some(Ok(reply)) = shown.map(serde_json::from_str::<Value>) {
            examples.push((path, serde_json::from_str(body).unwrap(), reply));
        }
    }
    examples
}

#[test]
fn the_replies_control_api_md_shows_whole_are_what_the_binary_answers() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let admin = admin_tables(dir.path(), "");
    let proxy = Proxy::start_with_tables(&[&upstream.addr], "", &admin, POLICY);
    let doc = include_str!("../../docs/src/control-api.md");
    let examples = whole_examples(doc);
    // Issue 72: the one-address ban was missing, the override's reply cut short unsaid.
    let paths: Vec<&str> = examples.iter().map(|(path, ..)| path.as_str()).collect();
    for path in ["/v1/bans", "/v1/overrides", "/v1/callers/reset"] {
        assert!(paths.contains(&path), "{path} in {paths:?}");
    }
    for (path, body, shown) in examples {
        let (status, reply) = control(&proxy, "POST", &path, Some(body));
        assert!(matches!(status, 200 | 201), "{path}: {status} {reply}");
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&reply), keys(&shown), "{path}: {reply}");
        // What does not change from one instance or moment to the next, as shown.
        for (key, value) in shown.as_object().unwrap() {
            if !["id", "caller", "created_at_ms", "expires_at_ms"].contains(&key.as_str()) {
                assert_eq!(&reply[key], value, "{path}: {key}");
            }
        }
    }
}
