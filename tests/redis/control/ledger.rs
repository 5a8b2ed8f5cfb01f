//! The ledger under pressure, each test re-running a probe of issue #63 with its new answer:
//! a change Redis does not confirm (paused with `CLIENT PAUSE`) is never answered as not made,
//! every attempt is logged with its outcome, and a retry under the same key makes nothing
//! twice; a ban of a network already banned returns the one that stands; 100,000 bans (through
//! the API on the memory store with a state file; in the Redis ledger of three instances) cost
//! what each change changes.

use super::*;
use common::load::hammer;
use floodgate::control::{Ban, BanTarget, Entry, Ledger, RedisLedger};
use floodgate::limiter::RedisDriver;
use futures_util::StreamExt;
use reqwest::blocking::Client;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

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
fn a_change_redis_does_not_confirm_is_never_answered_as_not_made_and_a_retry_makes_no_duplicate() {
    let upstream = Upstream::start();
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let admin = admin_tables(dir.path(), "");
    let config = on_redis(&redis, POLICY);
    let proxy = Proxy::start_with_tables(&[&upstream.addr], "", &admin, &config);
    let ban = json!({"scope": "cidr", "value": "198.51.100.0/24", "reason": "probe"});
    // The call must reach Redis before the pause for Redis to run it after: a change made and
    // undone first proves the connection and the loaded script (a proxy just started may
    // connect lazily or find its script missing, and a call that never left is not made).
    let warm = json!({"scope": "cidr", "value": "192.0.2.0/24", "reason": "warm-up"});
    let (status, warmed) = keyed(&proxy, "POST", "/v1/bans", Some(warm), "warm-1");
    assert_eq!(status, 201, "{warmed}");
    let path = format!("/v1/bans/{}", warmed["id"]);
    assert_eq!(keyed(&proxy, "DELETE", &path, None, "warm-2").0, 204);
    assert!(within(Duration::from_secs(10), || bans_listed(&proxy) == 0).is_some());

    pause(&redis, 1_500);
    let (status, answer) = keyed(&proxy, "POST", "/v1/bans", Some(ban.clone()), "add-1");
    assert_eq!(status, 504, "{answer}");
    assert_eq!(answer["outcome"], "unknown");
    assert_eq!(answer["idempotency_key"], "add-1");

    // Redis runs the paused call once the pause ends: the ban applies, once.
    let seen = within(Duration::from_secs(10), || bans_listed(&proxy) == 1);
    assert!(
        seen.is_some(),
        "the change Redis ran after the pause applies"
    );
    let (status, again) = keyed(&proxy, "POST", "/v1/bans", Some(ban.clone()), "add-1");
    assert_eq!(
        status, 200,
        "a retry under the key changes nothing: {again}"
    );
    let (status, other) = keyed(&proxy, "POST", "/v1/bans", Some(ban.clone()), "add-2");
    assert_eq!(status, 200, "the network is banned already: {other}");
    assert_eq!(again["id"], other["id"]);
    assert_eq!(bans_listed(&proxy), 1, "no duplicate");

    let path = format!("/v1/bans/{}", again["id"]);
    pause(&redis, 1_500);
    let (status, answer) = keyed(&proxy, "DELETE", &path, None, "del-1");
    assert_eq!(status, 504, "{answer}");
    // Redis runs the paused call once the pause ends: the ban goes.
    let gone = within(Duration::from_secs(10), || bans_listed(&proxy) == 0);
    assert!(
        gone.is_some(),
        "the delete Redis ran after the pause applies"
    );
    let (status, answer) = keyed(&proxy, "DELETE", &path, None, "del-1");
    assert_eq!(
        status, 204,
        "the retried delete answers as the first would have: {answer}"
    );
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

/// A kept-alive connection to an admin listener that sends control calls as plain HTTP/1.1
/// (the test's client costs little next to the calls it measures).
struct Admin {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Admin {
    fn connect(proxy: &Proxy) -> Self {
        let stream = TcpStream::connect(("127.0.0.1", proxy.admin_port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream.set_nodelay(true).unwrap();
        Self {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
        }
    }

    /// POSTs `body` to `/v1/bans`; the answer's status.
    fn ban(&mut self, body: &str) -> u16 {
        let head = format!(
            "POST /v1/bans HTTP/1.1\r\nHost: admin\r\nAuthorization: Bearer {TOKEN}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        self.writer.write_all(head.as_bytes()).unwrap();
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        let status = line
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let mut length = 0;
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).unwrap();
        status
    }
}

/// Adds `n` bans of distinct /32s in 10.0.0.0/8 through `proxies` from `threads` connections;
/// how long it took.
fn ban_many(proxies: &[&Proxy], n: u32, threads: u32) -> Duration {
    let started = Instant::now();
    std::thread::scope(|scope| {
        for t in 0..threads {
            let proxy = proxies[t as usize % proxies.len()];
            scope.spawn(move || {
                let mut admin = Admin::connect(proxy);
                for i in (t..n).step_by(threads as usize) {
                    let value = format!("10.{}.{}.{}", i >> 16, (i >> 8) & 255, i & 255);
                    let body = format!(r#"{{"scope":"cidr","value":"{value}"}}"#);
                    assert_eq!(admin.ban(&body), 201, "ban {value}");
                }
            });
        }
    });
    started.elapsed()
}

/// Adds `n` bans of distinct /32s in 10.0.0.0/8 straight to the ledger in `redis`, with the
/// proxies' own script under their default prefix, 64 at a time: what as many API calls leave
/// there, without the minutes a debug build's HTTP takes for them (the API's own pace at
/// 100,000 is measured on the memory store above); how long it took.
fn seed_bans(redis: &RedisServer, n: u32) -> Duration {
    let mut settings = common::difftest::settings(redis.url());
    settings.prefix = "floodgate".into();
    let ledger = RedisLedger::new(Arc::new(RedisDriver::new(&settings).unwrap()));
    let ban = |i: u32| {
        Entry::Ban(Ban {
            id: 0,
            target: BanTarget::Cidr {
                value: format!("10.{}.{}.{}/32", i >> 16, (i >> 8) & 255, i & 255),
            },
            reason: String::new(),
            by: "seed".into(),
            created_at_ms: 0,
            expires_at_ms: None,
        })
    };
    let started = Instant::now();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(
        futures_util::stream::iter(0..n)
            .map(|i| ledger.add(ban(i), None, 100_000, None))
            .buffer_unordered(64)
            .for_each(|added| async move {
                added.expect("the ledger takes the ban");
            }),
    );
    started.elapsed()
}

#[test]
fn a_hundred_thousand_bans_through_the_api_on_the_memory_store_with_a_state_file() {
    // 100,000 bans are measured one test at a time.
    let _alone = common::serial::alone();
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let admin = admin_tables(dir.path(), &format!("state_file = \"{}\"", state.display()));
    let proxy = Proxy::start_with_tables(&[&upstream.addr], "", &admin, POLICY);
    let took = ban_many(&[&proxy], 100_000, 4);
    eprintln!("100,000 bans on the memory store took {took:?}");
    assert!(took < Duration::from_secs(60), "{took:?}");
    assert_eq!(status_from(&proxy, "127.0.0.1", None), 200);
    let (_, page) = control(&proxy, "GET", "/v1/bans?limit=1000", None);
    assert_eq!(page["bans"].as_array().map(Vec::len), Some(1000));
    assert!(page["next_after"].is_u64());
}

/// The 99th percentile of proxied requests from two clients over `secs` seconds.
fn p99(proxy: &Proxy, secs: u64) -> Duration {
    let report = hammer(
        &[proxy.url("/x")],
        2,
        Duration::from_secs(secs),
        Duration::from_millis(2),
        &[("x-api-key", "load")],
    );
    report.quantile(0.99)
}

/// Whether a request sent by `client` is refused by a ban on each of `proxies`.
fn banned_everywhere(proxies: &[&Proxy], client: &Client) -> bool {
    proxies.iter().all(|p| {
        let status = client.get(p.url("/x")).send().map(|r| r.status().as_u16());
        status.is_ok_and(|s| s == 403)
    })
}

#[test]
fn a_hundred_thousand_bans_on_three_instances_sharing_redis_cost_what_each_change_changes() {
    // 100,000 bans are measured one test at a time.
    let _alone = common::serial::alone();
    let upstream = Upstream::start();
    let redis = RedisServer::start_with(&["--slowlog-log-slower-than", "10000"]);
    let dir = tempfile::tempdir().unwrap();
    let admin = admin_tables(dir.path(), "");
    let roomy = "[identity]\nsources = [\"header:x-api-key\", \"ip\"]\n\n\
                 [[policy]]\nname = \"per-user\"\ncapacity = 1000000\nrate = \"100000/s\"\n";
    let config = on_redis(&redis, roomy);
    let start = || Proxy::start_with_tables(&[&upstream.addr], "", &admin, &config);
    let (a, b, c) = (start(), start(), start());
    let before = p99(&a, 3);

    // 100,000 held once the last ban below is made (the default `admin.max_bans`): 99,998 in
    // the ledger, and one through the API that every instance refuses once it has read them.
    let took = seed_bans(&redis, 99_998);
    let (status, marker) = control(
        &b,
        "POST",
        "/v1/bans",
        Some(json!({"scope": "cidr", "value": "127.0.1.8"})),
    );
    assert_eq!(status, 201, "{marker}");
    let read = within(Duration::from_secs(60), || {
        banned_everywhere(&[&a, &b, &c], &client_from("127.0.1.8"))
    });
    eprintln!("99,998 bans written to Redis in {took:?}, read by three instances {read:?} later");
    assert!(read.is_some(), "every instance reads 100,000 bans");
    // From here on, at 100,000 entries, no Redis call may take 10 ms.
    let mut conn = redis.conn();
    let _: () = redis::cmd("SLOWLOG").arg("RESET").query(&mut conn).unwrap();

    // Each change made on one instance refuses on all three within a second, while changes
    // keep coming and requests are measured.
    let during = std::thread::scope(|scope| {
        let measured = scope.spawn(|| p99(&a, 3));
        for (round, maker) in [&a, &b, &c, &a, &b, &c].into_iter().enumerate() {
            let address = format!("127.0.0.{}", round + 2);
            let ban = json!({"scope": "cidr", "value": address});
            let (status, made) = control(maker, "POST", "/v1/bans", Some(ban));
            assert_eq!(status, 201, "{made}");
            let client = client_from(&address);
            let seen = within(Duration::from_secs(1), || {
                banned_everywhere(&[&a, &b, &c], &client)
            });
            assert!(
                seen.is_some(),
                "ban {round} not on every instance within 1 s"
            );
            let path = format!("/v1/bans/{}", made["id"]);
            assert_eq!(control(maker, "DELETE", &path, None).0, 204);
        }
        measured.join().unwrap()
    });
    eprintln!("proxy p99 {before:?} with no ban, {during:?} at 100,000 while changes are made");
    // The probe's regression was Redis held 98–247 ms by whole-list reads, every request
    // behind it. On two cores shared by three debug instances, Redis and the clients, p99
    // moves a few ms between runs either way (bench/RESULTS.md keeps the paired figures), so
    // this asserts the absence of that stall, not the 0.5 ms the release figure is held to.
    assert!(
        during < before + Duration::from_millis(5),
        "p99 {before:?} → {during:?}"
    );

    // A fourth instance reads the whole state a part at a time.
    let (_, made) = control(
        &a,
        "POST",
        "/v1/bans",
        Some(json!({"scope": "cidr", "value": "127.0.1.9"})),
    );
    let d = start();
    // Its whole read (100,000 entries parsed and indexed, in a debug build) is not held to the
    // second the changes are; it is read in parts so Redis is never held up meanwhile.
    let newest = || status_from(&d, "127.0.1.9", None) == 403;
    let read_whole = within(Duration::from_secs(30), newest);
    eprintln!("a fourth instance refused the newest ban {read_whole:?} after it answered");
    assert!(read_whole.is_some());
    assert!(made["id"].is_u64());

    let slow: Vec<redis::Value> = redis::cmd("SLOWLOG")
        .arg("GET")
        .arg(16)
        .query(&mut conn)
        .unwrap();
    assert!(slow.is_empty(), "Redis calls over 10 ms: {slow:?}");
}
