//! Hardening findings, end to end, each test named after the finding it pins: bearer tokens
//! that leave out a configured `iss` / `aud`, cookie spellings that earned fresh buckets, Redis
//! secrets printed by `--test`, path spellings that slipped past routes, forwarding headers,
//! requests without `Host`, connection limits, eviction and identity digests.

mod common;

use common::{raw, Proxy, Upstream};
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use serde_json::json;
use std::process::Command;

const SECRET: &str = "an-hmac-secret-for-the-tests-0123456789";

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn bearer(claims: serde_json::Value) -> String {
    let token = encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(SECRET.as_bytes()),
    )
    .unwrap();
    format!("Bearer {token}")
}

#[test]
fn jwt_issuer_and_audience_are_required_when_configured() {
    let upstream = Upstream::start();
    let config = format!(
        "[identity]\nsources = [\"jwt:sub\", \"ip\"]\non_invalid_token = \"reject\"\n\n\
         [identity.jwt]\nalgorithms = [\"HS256\"]\nsecret = \"{SECRET}\"\n\
         issuer = \"auth\"\naudience = \"api\"\n\n\
         [[policy]]\nname = \"per-user\"\ncapacity = 10\nrate = \"1/h\"\n"
    );
    let proxy = Proxy::start(&[&upstream.addr], &config);
    let exp = now() + 300;
    let status = |claims| {
        let auth = bearer(claims);
        proxy
            .get("/", &[("authorization", &auth)])
            .status()
            .as_u16()
    };
    assert_eq!(
        status(json!({"sub": "a", "iss": "auth", "aud": "api", "exp": exp})),
        200
    );
    let missing = [
        json!({"sub": "a", "aud": "api", "exp": exp}),
        json!({"sub": "a", "iss": "auth", "exp": exp}),
        json!({"sub": "a", "exp": exp}),
    ];
    for claims in missing {
        assert_eq!(status(claims.clone()), 401, "{claims}");
    }
    assert_eq!(
        upstream.served(),
        1,
        "no token without iss or aud got through"
    );
}

#[test]
fn cookie_spellings_share_one_bucket() {
    let upstream = Upstream::start();
    let config = "[identity]\nsources = [\"cookie:sid\", \"ip\"]\n\n\
                  [[policy]]\nname = \"per-session\"\ncapacity = 1\nrate = \"1/h\"\n";
    let proxy = Proxy::start(&[&upstream.addr], config);
    let status = |cookie: &str| proxy.get("/", &[("cookie", cookie)]).status().as_u16();
    assert_eq!(status("sid=dave"), 200);
    assert_eq!(status("sid= dave"), 429, "whitespace earns no fresh bucket");
    assert_eq!(status("sid=\"dave\""), 429, "quotes earn no fresh bucket");
    assert_eq!(status("theme=dark; sid = \"dave\" "), 429);
    assert_eq!(
        status("sid=erin"),
        200,
        "another caller has a bucket of its own"
    );
}

#[test]
fn redis_url_secrets_are_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("floodgate.toml");
    for url in [
        "redis+unix:///tmp/x.sock?pass=SECRET",
        "unix:///tmp/x.sock?password=SECRET",
        "redis://:SECRET@127.0.0.1:6379",
        "rediss://u:SECRET@127.0.0.1:1/0",
        "redis://127.0.0.1?password=SECRET",
    ] {
        let config = format!(
            "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n\
             [store]\nkind = \"redis\"\nurl = \"{url}\"\n\n\
             [[policy]]\nname = \"p\"\ncapacity = 10\nrate = \"10/s\"\n"
        );
        std::fs::write(&path, config).unwrap();
        let out = Command::new(common::floodgate_bin())
            .arg("--config")
            .arg(&path)
            .arg("--test")
            .output()
            .expect("run floodgate --test");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{url}: {stderr}");
        assert!(stdout.contains("store           redis "), "{stdout}");
        assert!(
            !stdout.contains("SECRET") && !stderr.contains("SECRET"),
            "{url} printed:\n{stdout}{stderr}"
        );
    }
}

#[test]
fn route_policies_cannot_be_bypassed_by_spelling_the_path_differently() {
    let upstream = Upstream::start();
    let config = "[[policy]]\nname = \"captcha\"\ncapacity = 1\nrate = \"1/h\"\n\
                  match = { path_prefix = \"/sendCaptcha\" }\n\n\
                  [[policy]]\nname = \"login\"\ncapacity = 1\nrate = \"1/h\"\n\
                  match = { path_regex = \"^/login$\" }\n";
    let proxy = Proxy::start(&[&upstream.addr], config);
    assert_eq!(raw::get(proxy.port, "/sendCaptcha?to=1", ""), 200);
    for path in [
        "//sendCaptcha",
        "/%73endCaptcha",
        "/./sendCaptcha",
        "/a/../sendCaptcha",
        "/%2e/sendCaptcha?to=2",
    ] {
        assert_eq!(raw::get(proxy.port, path, ""), 429, "{path}");
    }
    assert_eq!(raw::get(proxy.port, "/login", ""), 200);
    assert_eq!(raw::get(proxy.port, "//login", ""), 429);
    assert_eq!(
        raw::get(proxy.port, "/x/..//login/.", ""),
        200,
        "/login/ is not ^/login$"
    );
    assert_eq!(
        upstream.served(),
        3,
        "no respelled request reached the backend"
    );
    // What the backend serves is the path the policies saw, with the query as sent.
    assert_eq!(raw::get(proxy.port, "/a//b/./../%63?q=%2F", ""), 200);
    assert_eq!(upstream.last_target().as_deref(), Some("/a/c?q=%2F"));
    // A path with no normal form is refused, with a problem body.
    let refused = raw::exchange(
        proxy.port,
        "GET /a%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(raw::status(&refused), 400, "{refused}");
    assert!(refused.contains("application/problem+json"), "{refused}");
    assert_eq!(upstream.served(), 4);
}

#[test]
fn http11_without_host_gets_400() {
    let upstream = Upstream::start();
    let config = "[[policy]]\nname = \"api\"\ncapacity = 1\nrate = \"1/h\"\n\
                  match = { host = \"api.example.com\" }\n";
    let proxy = Proxy::start(&[&upstream.addr], config);
    let response = raw::exchange(proxy.port, "GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert_eq!(raw::status(&response), 400, "{response}");
    assert!(response.contains("Host header"), "{response}");
    assert_eq!(upstream.served(), 0);
    assert!(
        !proxy.log().contains("ERROR"),
        "a client error is not a proxy error"
    );
}

#[test]
fn http10_without_host_and_empty_or_invalid_hosts_get_400() {
    let upstream = Upstream::start();
    let config = "[[policy]]\nname = \"api\"\ncapacity = 1\nrate = \"1/h\"\n\
                  match = { host = \"api.example.com\" }\n";
    let proxy = Proxy::start_with_server(&[&upstream.addr], "h2c = true", config);
    let no_host = [
        "GET / HTTP/1.0\r\n\r\n",
        "GET / HTTP/1.0\r\nHost:\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: :80\r\nConnection: close\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: api.example.com x\r\nConnection: close\r\n\r\n",
    ];
    for head in no_host {
        let response = raw::exchange(proxy.port, head);
        assert_eq!(raw::status(&response), 400, "{head:?}: {response}");
        assert!(response.contains("application/problem+json"), "{response}");
    }
    assert_eq!(upstream.served(), 0);
    // HTTP/1.0 naming its host, in Host or in an absolute target: the host policy applies.
    let named = raw::exchange(
        proxy.port,
        "GET / HTTP/1.0\r\nHost: api.example.com\r\n\r\n",
    );
    assert_eq!(raw::status(&named), 200, "{named}");
    let absolute = raw::exchange(proxy.port, "GET http://api.example.com/ HTTP/1.0\r\n\r\n");
    assert_eq!(raw::status(&absolute), 429, "{absolute}");
    // HTTP/2 names its host in :authority.
    let h2 = |host: &str| {
        let client = reqwest::blocking::Client::builder()
            .http2_prior_knowledge()
            .resolve(host, ([127, 0, 0, 1], proxy.port).into())
            .build()
            .unwrap();
        let resp = client.get(format!("http://{host}:{}/", proxy.port)).send();
        let resp = resp.expect("an HTTP/2 answer");
        assert_eq!(resp.version(), reqwest::Version::HTTP_2);
        resp.status().as_u16()
    };
    assert_eq!(h2("localhost"), 200);
    assert_eq!(h2("api.example.com"), 429);
    // Pingora's pool may race its idle watcher when two requests reuse one backend connection
    // in a row ("failed to acquire reusable stream", then a fresh connection): not ours.
    let log = proxy.log();
    let errors: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("ERROR") && !l.contains("failed to acquire reusable stream"))
        .collect();
    assert!(
        errors.is_empty(),
        "a client error is not a proxy error: {errors:?}"
    );
}

#[test]
fn two_x_forwarded_for_lines_reach_the_upstream_merged() {
    let upstream = Upstream::start();
    let config = "[identity.ip]\ntrusted_proxies = [\"127.0.0.1/32\"]\n\n\
                  [[policy]]\nname = \"per-ip\"\ncapacity = 1\nrate = \"1/h\"\n";
    let proxy = Proxy::start(&[&upstream.addr], config);
    let lines = "X-Forwarded-For: 203.0.113.1\r\nX-Forwarded-For: 198.51.100.2, 192.0.2.3\r\n";
    assert_eq!(raw::get(proxy.port, "/", lines), 200);
    assert_eq!(
        upstream.last_header("x-forwarded-for"),
        vec!["203.0.113.1, 198.51.100.2, 192.0.2.3, 127.0.0.1".to_owned()]
    );
    // The limiter read the same list: its nearest untrusted hop is the caller.
    assert_eq!(
        raw::get(proxy.port, "/", "X-Forwarded-For: 192.0.2.3\r\n"),
        429
    );
}

#[test]
fn a_clients_forwarded_header_does_not_beat_the_load_balancers_x_forwarded_for() {
    let upstream = Upstream::start();
    // The test client plays the load balancer: trusted, it appends the client's address to
    // X-Forwarded-For and passes the client's own `Forwarded` through untouched.
    let config = "[identity.ip]\ntrusted_proxies = [\"127.0.0.1/32\"]\n\n\
                  [[policy]]\nname = \"per-ip\"\ncapacity = 2\nrate = \"1/h\"\n";
    let proxy = Proxy::start(&[&upstream.addr], config);
    let attacker = "203.0.113.5";
    let statuses: Vec<u16> = (0..6)
        .map(|i| {
            let forwarded = format!("for=198.51.100.{i}");
            let headers = [("x-forwarded-for", attacker), ("forwarded", &forwarded)];
            proxy.get("/", &headers).status().as_u16()
        })
        .collect();
    assert_eq!(
        statuses,
        [200, 200, 429, 429, 429, 429],
        "no fresh bucket per Forwarded"
    );
    // `Forwarded: for=<victim>` drained the attacker's own bucket, not the victim's.
    for _ in 0..3 {
        let headers = [
            ("x-forwarded-for", attacker),
            ("forwarded", "for=192.0.2.77"),
        ];
        assert_eq!(proxy.get("/", &headers).status(), 429);
    }
    let victim = [("x-forwarded-for", "192.0.2.77")];
    assert_eq!(proxy.get("/", &victim).status(), 200);
    assert_eq!(proxy.get("/", &victim).status(), 200);
    assert_eq!(proxy.get("/", &victim).status(), 429);
}

/// The digest prefix `/offenders` lists first, after `bot` was throttled twice.
fn offender_digest(proxy: &Proxy) -> String {
    for _ in 0..3 {
        proxy.get("/", &[("x-api-key", "bot")]);
    }
    let json: serde_json::Value = proxy.admin("/offenders").unwrap().json().unwrap();
    json["offenders"][0]["identity"]
        .as_str()
        .unwrap_or_else(|| panic!("no offender in {json}"))
        .to_owned()
}

#[test]
fn offenders_and_log_prefixes_cannot_be_reversed_by_enumeration() {
    use floodgate::identity::{Identity, IdentityKey};
    let upstream = Upstream::start();
    let policy = "[[policy]]\nname = \"p\"\ncapacity = 1\nrate = \"1/h\"\n";
    let unkeyed = |key: &IdentityKey| Identity::of(key, "header:x-api-key", b"bot").hex();
    // Memory store, nothing configured: each process has a random key of its own.
    let memory = format!("[identity]\nsources = [\"header:x-api-key\"]\n\n{policy}");
    let (a, b) = (
        Proxy::start(&[&upstream.addr], &memory),
        Proxy::start(&[&upstream.addr], &memory),
    );
    let (digest_a, digest_b) = (offender_digest(&a), offender_digest(&b));
    assert_ne!(digest_a, digest_b, "per-process keys");
    assert!(!unkeyed(&IdentityKey::from_bytes([0; 32])).starts_with(&digest_a));
    // A configured key: stable across processes, and computable by whoever holds it.
    let secret = "a configured identity hash key of 32+ bytes";
    let configured = memory.replace(
        "[identity]\n",
        &format!("[identity]\nhash_key = \"{secret}\"\n"),
    );
    let (c, d) = (
        Proxy::start(&[&upstream.addr], &configured),
        Proxy::start(&[&upstream.addr], &configured),
    );
    let expected = unkeyed(&IdentityKey::from_secret(secret).unwrap());
    assert_eq!(offender_digest(&c), expected[..16]);
    assert_eq!(offender_digest(&d), expected[..16]);
    // Redis, nothing configured: the fleet agrees on the key the first instance stored.
    let redis = common::redis::RedisServer::start();
    let shared = format!(
        "[store]\nkind = \"redis\"\nurl = \"{}\"\n\n{memory}",
        redis.url()
    );
    let (e, f) = (
        Proxy::start(&[&upstream.addr], &shared),
        Proxy::start(&[&upstream.addr], &shared),
    );
    assert_eq!(e.get("/", &[("x-api-key", "bot")]).status(), 200);
    assert_eq!(
        f.get("/", &[("x-api-key", "bot")]).status(),
        429,
        "one bucket"
    );
    let mut conn = redis.conn();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("floodgate:{*")
        .query(&mut conn)
        .unwrap();
    assert_eq!(keys.len(), 1, "{keys:?}");
    let stored: String = redis::cmd("GET")
        .arg("floodgate:hash_key")
        .query(&mut conn)
        .unwrap();
    let fleet = unkeyed(&IdentityKey::from_secret(&stored).unwrap());
    assert_eq!(keys[0], format!("floodgate:{{{fleet}}}:p"));
    assert_eq!(offender_digest(&e), offender_digest(&f));
}

#[test]
fn without_redis_at_start_an_instance_warns_and_keys_digests_on_its_own() {
    let upstream = Upstream::start();
    let port = common::free_port();
    let config = format!(
        "[store]\nkind = \"redis\"\nurl = \"redis://127.0.0.1:{port}\"\non_error = \"local\"\n\n\
         [identity]\nsources = [\"header:x-api-key\"]\n\n\
         [[policy]]\nname = \"p\"\ncapacity = 1\nrate = \"1/h\"\n"
    );
    let started = std::time::Instant::now();
    let proxy = Proxy::start(&[&upstream.addr], &config);
    assert!(started.elapsed() < floodgate::app::FLEET_KEY_WAIT * 5);
    assert!(
        proxy.log().contains("uses a random key of its own"),
        "{}",
        proxy.log()
    );
    // It still limits (on its local fallback here).
    assert_eq!(proxy.get("/", &[("x-api-key", "k")]).status(), 200);
    assert_eq!(proxy.get("/", &[("x-api-key", "k")]).status(), 429);
}

/// Reads from `stream` until the proxy closes it (or 10 s pass): what it sent, and when.
fn until_closed(stream: &mut std::net::TcpStream) -> (String, std::time::Duration) {
    use std::io::Read;
    let started = std::time::Instant::now();
    let mut out = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&chunk[..n]),
        }
    }
    (
        String::from_utf8_lossy(&out).into_owned(),
        started.elapsed(),
    )
}

#[test]
fn slowloris_heads_are_closed_after_header_timeout() {
    use std::io::Write;
    use std::time::Duration;
    let upstream = Upstream::start();
    let proxy = Proxy::start_with_server(&[&upstream.addr], "header_timeout = \"1s\"", "");
    // A head sent a byte every 100 ms never completes in time.
    trickle_until_closed(raw::connect(proxy.port));
    // So does the next head on a connection that was served: its clock starts at its first
    // byte.
    let mut reused = raw::connect(proxy.port);
    reused
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    assert_eq!(raw::status(&raw::read_response(&mut reused)), 200);
    trickle_until_closed(reused);
    // A connection that says nothing is closed too.
    let (_, after) = until_closed(&mut raw::connect(proxy.port));
    assert!(after < Duration::from_secs(3), "{after:?}");
    // A whole head in time is served.
    assert_eq!(raw::get(proxy.port, "/", ""), 200);
    assert_eq!(upstream.served(), 2);
}

/// Writes a request head to `conn` a byte every 100 ms and checks that the proxy closes the
/// connection, unanswered, after the 1 s header_timeout (within generous bounds).
fn trickle_until_closed(mut conn: std::net::TcpStream) {
    use std::time::Duration;
    let writer = trickle(conn.try_clone().unwrap());
    let (answer, after) = until_closed(&mut conn);
    assert!(answer.is_empty(), "{answer}");
    assert!(
        after >= Duration::from_millis(900) && after < Duration::from_secs(3),
        "{after:?}"
    );
    writer.join().unwrap();
}

/// Writes a request head to `conn` a byte every 100 ms, until it is closed.
fn trickle(mut conn: std::net::TcpStream) -> std::thread::JoinHandle<()> {
    use std::io::Write;
    std::thread::spawn(move || {
        let head = b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
        for byte in head {
            if conn.write_all(&[*byte]).is_err() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    })
}

#[test]
fn idle_keepalive_connections_are_closed_after_keepalive_timeout() {
    use std::io::Write;
    use std::time::Duration;
    let upstream = Upstream::start();
    let server = "header_timeout = \"1s\"\nkeepalive_timeout = \"2s\"";
    let proxy = Proxy::start_with_server(&[&upstream.addr], server, "");
    let mut conn = raw::connect(proxy.port);
    let request = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    for _ in 0..2 {
        conn.write_all(request).unwrap();
        assert_eq!(raw::status(&raw::read_response(&mut conn)), 200);
        // Idling past header_timeout between requests is fine: the next head's clock starts
        // at its first byte.
        std::thread::sleep(Duration::from_millis(1500));
    }
    conn.write_all(request).unwrap();
    assert_eq!(raw::status(&raw::read_response(&mut conn)), 200);
    let (rest, after) = until_closed(&mut conn);
    assert!(rest.is_empty(), "{rest}");
    assert!(
        after >= Duration::from_millis(1500) && after < Duration::from_secs(4),
        "{after:?}"
    );
    assert_eq!(upstream.served(), 3);
}

#[test]
fn a_100_kb_header_gets_431() {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], "");
    let big = "a".repeat(100 * 1024);
    let head = format!("GET / HTTP/1.1\r\nHost: x\r\nX-Big: {big}\r\n\r\n");
    let response = raw::exchange(proxy.port, &head);
    assert_eq!(
        raw::status(&response),
        431,
        "{}",
        &response[..response.len().min(300)]
    );
    assert!(response.contains("application/problem+json"));
    // Just under the limit is served.
    let fits = "a".repeat(60 * 1024);
    assert_eq!(
        raw::get(proxy.port, "/", &format!("X-Big: {fits}\r\n")),
        200
    );
    assert_eq!(upstream.served(), 1);
}

#[test]
fn past_max_connections_new_connections_are_refused_while_existing_ones_work() {
    use std::io::Write;
    use std::time::Duration;
    let upstream = Upstream::start();
    let proxy = Proxy::start_with_server(&[&upstream.addr], "max_connections = 3", "");
    std::thread::sleep(Duration::from_millis(500)); // the harness's readiness probe closes
    let request = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    let mut open: Vec<std::net::TcpStream> = (0..3).map(|_| raw::connect(proxy.port)).collect();
    for conn in &mut open {
        conn.write_all(request).unwrap();
        assert_eq!(raw::status(&raw::read_response(conn)), 200);
    }
    let mut refused = raw::connect(proxy.port);
    let _ = refused.write_all(request);
    let (answer, _) = until_closed(&mut refused);
    assert!(answer.is_empty(), "refused without an answer: {answer}");
    for conn in &mut open {
        conn.write_all(request).unwrap();
        assert_eq!(raw::status(&raw::read_response(conn)), 200, "still served");
    }
    assert_eq!(
        proxy.metric("floodgate_connections_refused_total{reason=\"total\"}"),
        1.0
    );
    assert_eq!(proxy.metric("floodgate_connections_open"), 3.0);
    drop(open.pop());
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(raw::get(proxy.port, "/", ""), 200, "a slot came free");

    // Per client address.
    let proxy = Proxy::start_with_server(
        &[&upstream.addr],
        "max_connections = 100\nmax_connections_per_ip = 2",
        "",
    );
    std::thread::sleep(Duration::from_millis(500));
    let mut mine: Vec<std::net::TcpStream> = (0..2).map(|_| raw::connect(proxy.port)).collect();
    for conn in &mut mine {
        conn.write_all(request).unwrap();
        assert_eq!(raw::status(&raw::read_response(conn)), 200);
    }
    let mut third = raw::connect(proxy.port);
    let _ = third.write_all(request);
    assert!(until_closed(&mut third).0.is_empty());
    assert_eq!(
        proxy.metric("floodgate_connections_refused_total{reason=\"per_ip\"}"),
        1.0
    );
}

/// A proxy run by hand under `prlimit --nofile=<nofile>` (util-linux) in front of `backend`,
/// default caps; killed when dropped.
struct Limited {
    child: std::process::Child,
    dir: tempfile::TempDir,
    port: u16,
    admin: u16,
}

impl Limited {
    fn start(nofile: &str, backend: &str) -> Self {
        let (port, admin) = (common::free_port(), common::free_port());
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("floodgate.toml");
        let text = format!(
            "[server]\nlisten = \"127.0.0.1:{port}\"\nthreads = 2\n\n\
             [admin]\nlisten = \"127.0.0.1:{admin}\"\n\n[upstream]\nbackends = [\"{backend}\"]\n"
        );
        std::fs::write(&config, text).unwrap();
        let log = std::fs::File::create(dir.path().join("log")).unwrap();
        let child = Command::new("prlimit")
            .arg(format!("--nofile={nofile}"))
            .arg(common::floodgate_bin())
            .arg("--config")
            .arg(&config)
            .stderr(log)
            .spawn()
            .expect("prlimit (util-linux) runs the proxy");
        let limited = Self {
            child,
            dir,
            port,
            admin,
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while limited.metrics().is_none() {
            assert!(std::time::Instant::now() < deadline, "{}", limited.log());
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        limited
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
    }

    /// The admin listener's `/metrics`, once it answers.
    fn metrics(&self) -> Option<String> {
        let url = format!("http://127.0.0.1:{}/metrics", self.admin);
        reqwest::blocking::get(url).ok()?.text().ok()
    }

    fn metric(&self, series: &str) -> f64 {
        let text = self.metrics().unwrap_or_default();
        let value = text
            .lines()
            .find_map(|l| l.strip_prefix(series)?.trim().parse().ok());
        value.unwrap_or(0.0)
    }
}

impl Drop for Limited {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_low_open_file_limit_lowers_the_connection_cap_and_new_clients_are_still_served() {
    use std::io::Read;
    let upstream = Upstream::start();
    // The soft limit is raised to the hard one at start.
    let raised = Limited::start("256:4096", &upstream.addr);
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", raised.child.id())).unwrap();
    let open_files = limits.lines().find(|l| l.starts_with("Max open files"));
    assert!(open_files.is_some_and(|l| l.contains("4096")), "{limits}");
    assert!(
        raised.log().contains("from 256 to 4096"),
        "{}",
        raised.log()
    );
    drop(raised);

    // 256 descriptors at most: 64 connections (two each after a reserve of 128).
    let proxy = Limited::start("256:256", &upstream.addr);
    assert!(
        proxy.log().contains("lowered from 10000 to 64"),
        "{}",
        proxy.log()
    );
    // In waves of 50, each answered (admitted or refused) before the next: the cap is what is
    // under test, not how many refused sockets a loaded machine accepts before it closes them.
    let refused = || proxy.metric("floodgate_connections_refused_total{reason=\"total\"}");
    let mut idle: Vec<std::net::TcpStream> = Vec::new();
    let settled = std::time::Instant::now() + std::time::Duration::from_secs(10);
    for _ in 0..6 {
        idle.extend((0..50).map(|_| raw::connect(proxy.port)));
        let answered = idle.len() as f64;
        while refused() + proxy.metric("floodgate_connections_open") < answered {
            assert!(std::time::Instant::now() < settled, "{}", proxy.log());
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
    assert!(refused() >= 236.0, "{}", proxy.log());
    assert_eq!(proxy.metric("floodgate_connections_open"), 64.0);
    // The refused ones were closed at once; free ten of the admitted ones.
    idle.retain_mut(|conn| {
        conn.set_nonblocking(true).unwrap();
        !matches!(conn.read(&mut [0u8; 1]), Ok(0))
    });
    assert_eq!(idle.len(), 64);
    idle.truncate(54);
    std::thread::sleep(std::time::Duration::from_millis(300));
    for _ in 0..5 {
        assert_eq!(raw::get(proxy.port, "/", ""), 200, "a new client is served");
    }
    assert!(
        !proxy.log().contains("Too many open files"),
        "{}",
        proxy.log()
    );
}
