//! The decision endpoint with the real nginx (`auth_request`) and the real Caddy
//! (`forward_auth`) in front of a real backend: bursts, 429s with their headers at the client,
//! other callers untouched, deny-listed addresses refused, the backend never sees a refused
//! request; two nginx asking two Floodgate instances on one Redis share one exact limit; and
//! the request shapes of Traefik and Envoy, replayed.

use crate::common;

use common::front::Front;
use common::redis::RedisServer;
use common::{free_port, Proxy, Upstream};
use reqwest::blocking::{Client, Response};
use std::time::{Duration, Instant};

const POLICY: &str = "[identity]\nsources = [\"header:x-api-key\", \"ip\"]\n\n\
    [access]\ndeny = [\"cidr:127.0.0.2/32\"]\n\n\
    [[policy]]\nname = \"per-key\"\ncapacity = 5\nrate = \"1/m\"\n";

/// A Floodgate whose decision endpoint listens on a free port: the proxy and that port.
fn floodgate(upstream: &Upstream, extra: &str) -> (Proxy, String) {
    let port = free_port();
    let config = format!(
        "{extra}\n{POLICY}\n[check]\nlisten = \"127.0.0.1:{port}\"\ndedupe_header = \"x-request-id\"\n"
    );
    let proxy = Proxy::start(&[&upstream.addr], &config);
    (proxy, format!("127.0.0.1:{port}"))
}

fn client(from: &str) -> Client {
    Client::builder()
        .local_address(from.parse().ok())
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

fn get(front: &Front, key: &str) -> Response {
    client("127.0.0.1")
        .get(front.url("/api/items?page=1"))
        .header("x-api-key", key)
        .send()
        .unwrap()
}

/// The whole scenario through one front proxy.
fn limits_through(front: &Front, upstream: &Upstream) {
    let served = upstream.served();
    for i in 0..5 {
        let response = get(front, "alice");
        assert_eq!(response.status(), 200, "request {i}");
        let headers = response.headers();
        assert!(headers["ratelimit"]
            .to_str()
            .unwrap()
            .starts_with("\"per-key\";r="));
        assert_eq!(headers["ratelimit-policy"], "\"per-key\";q=5;w=300");
    }
    let refused = get(front, "alice");
    assert_eq!(refused.status(), 429);
    let retry: u64 = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    assert_eq!(refused.headers()["ratelimit"], "\"per-key\";r=0;t=300");
    assert!(refused.headers()["ratelimit-policy"]
        .to_str()
        .unwrap()
        .contains("q=5"));
    // Issue 82: nginx's `add_header` inside an `if` once dropped the location's no-store.
    assert_eq!(refused.headers()["cache-control"], "no-store");
    assert_eq!(
        get(front, "bob").status(),
        200,
        "another caller is unaffected"
    );
    let denied = client("127.0.0.2").get(front.url("/")).send().unwrap();
    assert_eq!(
        denied.status(),
        403,
        "the deny-list reaches through the front proxy"
    );
    assert_eq!(denied.headers()["cache-control"], "no-store");
    assert_eq!(
        upstream.served(),
        served + 6,
        "the backend saw the allowed requests only"
    );
}

#[test]
fn nginx_auth_request_asks_floodgate_and_the_client_sees_its_answers() {
    let (backend, checks) = (Upstream::start(), Upstream::start());
    let (_floodgate, check) = floodgate(&checks, "");
    let nginx = Front::nginx(&backend.addr, &check);
    limits_through(&nginx, &backend);
    assert!(!nginx.log().contains("[emerg]"), "{}", nginx.log());
}

#[test]
fn nginx_logs_an_error_per_throttled_check_unless_floodgate_answers_it_with_403() {
    let (backend, checks) = (Upstream::start(), Upstream::start());
    let (_floodgate, check) = floodgate(&checks, "");
    let nginx = Front::nginx(&backend.addr, &check);
    limits_through(&nginx, &backend);
    let log = nginx.log();
    // The snippet as shipped: one error line per throttled request (one here).
    assert_eq!(
        log.matches("auth request unexpected status: 429").count(),
        1,
        "{log}"
    );
    // What check.md shows to quiet it: the client sees the same answers, nginx logs nothing.
    let (_quiet, check) = floodgate(&checks, "[response]\nstatus = 403\n");
    let nginx = Front::nginx(&backend.addr, &check);
    limits_through(&nginx, &backend);
    assert!(!nginx.log().contains("[error]"), "{}", nginx.log());
}

#[test]
fn caddy_forward_auth_asks_floodgate_and_the_client_sees_its_answers() {
    let (backend, checks) = (Upstream::start(), Upstream::start());
    let (_floodgate, check) = floodgate(&checks, "");
    let caddy = Front::caddy(&backend.addr, &check);
    limits_through(&caddy, &backend);
    // Caddy hands the client Floodgate's own refusal, body included.
    let body: serde_json::Value = get(&caddy, "alice").json().unwrap();
    assert_eq!(body["policy"], "per-key");
}

#[test]
fn two_nginx_asking_two_floodgates_on_one_redis_share_one_exact_limit() {
    let (backend, checks) = (Upstream::start(), Upstream::start());
    let redis = RedisServer::start();
    let store = format!("[store]\nkind = \"redis\"\nurl = \"{}\"\n", redis.url());
    let (_a, check_a) = floodgate(&checks, &store);
    let (_b, check_b) = floodgate(&checks, &store);
    let fronts = [
        Front::nginx(&backend.addr, &check_a),
        Front::nginx(&backend.addr, &check_b),
    ];
    let allowed = (0..20)
        .filter(|i| get(&fronts[i % 2], "carol").status() == 200)
        .count();
    assert_eq!(allowed, 5, "one limit across both");
}

#[test]
fn traefik_and_envoy_request_shapes_are_decided_like_the_request_they_describe() {
    let checks = Upstream::start();
    let (_floodgate, check) = floodgate(&checks, "");
    let http = client("127.0.0.1");
    // Traefik forwardAuth: X-Forwarded-* and the client's headers.
    let traefik = |key: &str| {
        http.get(format!("http://{check}/"))
            .header("x-forwarded-method", "POST")
            .header("x-forwarded-uri", "/orders?id=7")
            .header("x-forwarded-host", "shop.example")
            .header("x-forwarded-for", "203.0.113.9")
            .header("x-api-key", key)
            .send()
            .unwrap()
    };
    for _ in 0..5 {
        let allowed = traefik("dave");
        assert_eq!(allowed.status(), 200);
        assert_eq!(allowed.headers()["cache-control"], "no-store");
    }
    let refused = traefik("dave");
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.headers()["cache-control"], "no-store");
    // Envoy ext_authz (HTTP): the original method and path under /check.
    let envoy = http
        .delete(format!("http://{check}/check/orders/7"))
        .header("x-forwarded-for", "203.0.113.10")
        .send()
        .unwrap();
    assert_eq!(envoy.status(), 200);
    // A stated client from the deny-list is refused; a check from an untrusted peer is 403.
    let denied = http
        .get(format!("http://{check}/"))
        .header("x-forwarded-for", "127.0.0.2")
        .send()
        .unwrap();
    assert_eq!(denied.status(), 403);
    let untrusted = client("127.0.0.3")
        .get(format!("http://{check}/"))
        .send()
        .unwrap();
    assert_eq!(untrusted.status(), 403);
    assert!(untrusted.text().unwrap().contains("check.trusted"));
    // The same request id, caller and target asked again: the first answer, nothing taken.
    let ask = |id: &str| {
        http.get(format!("http://{check}/"))
            .header("x-original-uri", "/x")
            .header("x-forwarded-for", "198.51.100.1")
            .header("x-request-id", id)
            .send()
            .unwrap()
            .status()
    };
    assert_eq!((0..8).map(|_| ask("one")).filter(|s| *s == 200).count(), 8);
    let fresh = (0..8)
        .map(|i| ask(&format!("id-{i}")))
        .filter(|s| *s == 200)
        .count();
    assert_eq!(fresh, 4, "the repeated id took one token, not eight");
}

#[test]
fn an_nginx_internal_redirect_asks_twice_and_is_counted_once() {
    let (backend, checks) = (Upstream::start(), Upstream::start());
    let (_floodgate, check) = floodgate(&checks, "");
    // `try_files` finds no file and redirects to @backend: auth_request runs again there.
    let server = include_str!("../../docs/src/check/nginx.conf").replace(
        "    location / {",
        "    root /nonexistent;\n    location /files/ {\n        try_files $uri @backend;\n    }\n\
         \n    location @backend {\n        auth_request /_floodgate;\n        proxy_pass http://BACKEND;\n    }\n\
         \n    location / {",
    );
    let server = server.replacen(
        "    location /files/ {",
        "    location /files/ {\n        auth_request /_floodgate;",
        1,
    );
    let nginx = Front::nginx_with(&server, &backend.addr, &check);
    let status = || {
        client("127.0.0.1")
            .get(nginx.url("/files/report.pdf"))
            .header("x-api-key", "erin")
            .send()
            .unwrap()
            .status()
            .as_u16()
    };
    let allowed = (0..5).filter(|_| status() == 200).count();
    assert_eq!(allowed, 5, "each request counted once though checked twice");
    assert_eq!(
        status(),
        500,
        "the sixth is refused (a bare 500 outside the snippet's location)"
    );
    assert!(checks.served() == 0, "the decision endpoint is not proxied");
}

/// Issue #63, probe 9: the request id is the client's to set (here nothing overwrites it): a
/// banned key asking with the id of an allowed answer gets its own answer, not the replay.
#[test]
fn a_repeated_request_id_with_another_key_is_decided_afresh() {
    let checks = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, "ops:0123456789abcdef\n").unwrap();
    let admin = format!("token_file = \"{}\"", tokens.display());
    let port = free_port();
    let config = format!(
        "{POLICY}\n[check]\nlisten = \"127.0.0.1:{port}\"\ndedupe_header = \"x-request-id\"\n"
    );
    let floodgate = Proxy::start_with_tables(&[&checks.addr], "", &admin, &config);
    let ban = client("127.0.0.1")
        .post(format!("http://127.0.0.1:{}/v1/bans", floodgate.admin_port))
        .bearer_auth("0123456789abcdef")
        .json(&serde_json::json!({"scope": "caller", "source": "header:x-api-key", "value": "leaked"}))
        .send()
        .unwrap();
    assert_eq!(ban.status(), 201);
    let ask = |id: &str, key: &str| {
        client("127.0.0.1")
            .get(format!("http://127.0.0.1:{port}/"))
            .header("x-original-uri", "/x")
            .header("x-request-id", id)
            .header("x-api-key", key)
            .send()
            .unwrap()
            .status()
            .as_u16()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let mut probe = 0;
    while ask(&format!("probe-{probe}"), "leaked") != 403 {
        assert!(std::time::Instant::now() < deadline, "the ban applies");
        std::thread::sleep(Duration::from_millis(100));
        probe += 1;
    }
    assert_eq!(ask("req-1", "good"), 200);
    assert_eq!(
        ask("req-1", "leaked"),
        403,
        "not the good key's replayed 200"
    );
    assert_eq!(ask("req-1", "good"), 200, "the good key's answer replayed");
}

/// Issue 75: a refusal of the decision endpoint carries the id the asking proxy sent
/// (`check.dedupe_header`) as `ref`, the reference its client can quote.
#[test]
fn a_refusal_of_the_decision_endpoint_carries_the_asking_proxys_id_as_ref() {
    let checks = Upstream::start();
    let (_floodgate, at) = floodgate(&checks, "");
    let ask = |id: &str| {
        client("127.0.0.1")
            .get(format!("http://{at}/"))
            .header("x-original-uri", "/x")
            .header("x-request-id", id)
            .header("x-api-key", "carol")
            .send()
            .unwrap()
    };
    for i in 0..5 {
        assert_eq!(ask(&format!("a{i}")).status(), 200);
    }
    let refused = ask("5f0c2e6a91d84b7e3a0c19f2d8e4b6a1");
    assert_eq!(refused.status(), 429);
    let body: serde_json::Value = refused.json().unwrap();
    assert_eq!(body["ref"], "5f0c2e6a91d84b7e3a0c19f2d8e4b6a1", "{body}");
    assert_eq!(body["policy"], "per-key");
}

/// A running floodgate process stopped by its handle when dropped.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A check-only instance (no `[upstream]`, no `[server]` table) logging to `dir`: the
/// process, its decision endpoint's port and its admin port.
fn check_only(dir: &std::path::Path) -> (Child, u16, u16) {
    let (check, admin) = (free_port(), free_port());
    let config = dir.join("check-only.toml");
    std::fs::write(
        &config,
        format!(
            "[admin]\nlisten = \"127.0.0.1:{admin}\"\n\n{POLICY}\n\
             [check]\nlisten = \"127.0.0.1:{check}\"\n"
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.join("floodgate.log")).unwrap();
    let floodgate = Child(
        std::process::Command::new(common::floodgate_bin())
            .arg("--config")
            .arg(&config)
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    (floodgate, check, admin)
}

/// The status of asking `check` about `/api` for `erin`, retried while nothing listens.
fn ask(http: &Client, check: u16) -> u16 {
    let answer = answer_when_listening(|| {
        http.get(format!("http://127.0.0.1:{check}/"))
            .header("x-original-uri", "/api")
            .header("x-api-key", "erin")
            .send()
    });
    answer.status().as_u16()
}

/// `url`'s answer, asked again while nothing listens there: the admin listener may come up a
/// moment after the check listener.
fn get_when_listening(http: &Client, url: &str) -> Response {
    answer_when_listening(|| http.get(url).send())
}

/// What `send` gets, sent again (30 s at most) while it gets no answer.
fn answer_when_listening(send: impl Fn() -> reqwest::Result<Response>) -> Response {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match send() {
            Ok(answer) => return answer,
            Err(e) if Instant::now() > deadline => panic!("no answer: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

#[test]
fn a_check_only_config_runs_without_upstream_or_server_tables_and_answers_check() {
    let dir = tempfile::tempdir().unwrap();
    let (_floodgate, check, admin) = check_only(dir.path());
    let http = client("127.0.0.1");
    let answers: Vec<u16> = (0..6).map(|_| ask(&http, check)).collect();
    assert_eq!(answers, [200, 200, 200, 200, 200, 429]);
    let ready = get_when_listening(&http, &format!("http://127.0.0.1:{admin}/readyz"));
    assert_eq!(ready.status(), 200, "no pool to be down");
    let log = std::fs::read_to_string(dir.path().join("floodgate.log")).unwrap();
    let serving = format!("no proxy: no [upstream]; [check] on 127.0.0.1:{check}");
    assert!(log.contains(&serving), "{log}");
}

#[test]
fn a_check_only_instance_exits_at_once_on_sigterm_with_nothing_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let (mut floodgate, check, admin) = check_only(dir.path());
    // An idle keep-alive connection to each listener stays open: nothing in flight.
    let http = client("127.0.0.1");
    assert_eq!(ask(&http, check), 200);
    let health = get_when_listening(&http, &format!("http://127.0.0.1:{admin}/healthz"));
    assert_eq!(health.status(), 200);
    let sent = Instant::now();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &floodgate.0.id().to_string()])
        .status();
    assert!(killed.is_ok_and(|s| s.success()));
    let exited = loop {
        if let Some(status) = floodgate.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            sent.elapsed() < Duration::from_secs(10),
            "still running 10 s after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = sent.elapsed();
    let log = std::fs::read_to_string(dir.path().join("floodgate.log")).unwrap();
    assert!(exited.success(), "{exited:?}\n{log}");
    assert!(
        took < Duration::from_millis(1500),
        "exited after {took:?}\n{log}"
    );
}
