//! The CrowdSec bouncer against a real Local API (Debian's crowdsec 1.4.6, decisions made with
//! the real `cscli`), with the real binary and clients bound to other loopback addresses: three
//! instances sharing one Redis and one bouncer key apply an address and a range within the
//! poll interval + 1 s, and stop applying a deleted or ended decision as fast; LAPI killed for
//! 30 s changes nothing for requests; the pulling instance killed, another takes over; an
//! answer over `max_answer_bytes` is refused and logged.

use crate::common;

use common::crowdsec::Lapi;
use common::front::Front;
use common::redis::RedisServer;
use common::visitor::{Visitor, Work};
use common::{client_from, status_from, Proxy, Upstream};
use std::time::{Duration, Instant};

/// CrowdSec's recommended interval, Floodgate's default.
const INTERVAL: Duration = Duration::from_secs(10);

fn crowdsec_table(lapi: &Lapi, key_file: &std::path::Path, extra: &str) -> String {
    format!(
        "[crowdsec]\nurl = \"{}\"\napi_key_file = \"{}\"\n{extra}\n",
        lapi.url(),
        key_file.display()
    )
}

/// The status `proxy` answers a GET from `address`.
/// Waits until every proxy answers `address` with `status`, up to `limit` after `since`.
fn until_all(proxies: &[&Proxy], address: &str, status: u16, since: Instant, limit: Duration) {
    loop {
        let answers: Vec<u16> = proxies
            .iter()
            .map(|p| status_from(p, address, None))
            .collect();
        if answers.iter().all(|s| *s == status) {
            return;
        }
        assert!(
            since.elapsed() < limit,
            "{address}: {answers:?} after {:?}, not all {status}",
            since.elapsed()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn three_instances_sharing_redis_apply_lapis_decisions_within_the_interval() {
    let lapi = Lapi::start();
    let key = lapi.bouncer_key("floodgate", "fleet-key-0123456789abcdef");
    let redis = RedisServer::start();
    let upstream = Upstream::start();
    let config = format!(
        "[store]\nkind = \"redis\"\nurl = \"{}\"\n\n{}",
        redis.url(),
        crowdsec_table(&lapi, &key, "")
    );
    let proxies: Vec<Proxy> = (0..3)
        .map(|_| Proxy::start(&[&upstream.addr], &config))
        .collect();
    let all: Vec<&Proxy> = proxies.iter().collect();
    let within = INTERVAL + Duration::from_secs(1);
    until_all(&all, "127.0.0.2", 200, Instant::now(), within);

    let added = Instant::now();
    lapi.cscli(&["decisions", "add", "--ip", "127.0.0.2", "--duration", "1h"]);
    lapi.cscli(&[
        "decisions",
        "add",
        "--range",
        "127.0.1.0/24",
        "--duration",
        "1h",
    ]);
    until_all(&all, "127.0.0.2", 403, added, within);
    until_all(&all, "127.0.1.5", 403, added, within);
    assert_eq!(
        status_from(&proxies[0], "127.0.0.1", None),
        200,
        "others pass"
    );
    let refused = client_from("127.0.1.5")
        .get(proxies[1].url("/x"))
        .send()
        .unwrap();
    let body: serde_json::Value = refused.json().unwrap();
    assert_eq!(
        body["banned"], true,
        "the same answer as an admin ban: {body}"
    );
    assert!(
        !body.to_string().contains("manual"),
        "no scenario in the answer: {body}"
    );
    for proxy in &proxies {
        assert_eq!(proxy.metric("floodgate_crowdsec_decisions"), 2.0);
        assert!(proxy.metric("floodgate_crowdsec_last_pull_age_seconds") <= 11.0);
    }
    let pulls: f64 = proxies
        .iter()
        .map(|p| p.metric("floodgate_crowdsec_pulls_total{result=\"ok\"}"))
        .sum();
    let pullers = proxies
        .iter()
        .filter(|p| p.metric("floodgate_crowdsec_pulls_total{result=\"ok\"}") > 0.0)
        .count();
    assert!(
        pulls >= 1.0 && pullers == 1,
        "one instance pulls for the fleet"
    );

    let deleted = Instant::now();
    lapi.cscli(&["decisions", "delete", "--ip", "127.0.0.2"]);
    until_all(&all, "127.0.0.2", 200, deleted, within);
    assert_eq!(
        status_from(&proxies[2], "127.0.1.5", None),
        403,
        "the range stays"
    );

    // A decision ends on time, wherever it was pulled.
    let short = Instant::now();
    lapi.cscli(&["decisions", "add", "--ip", "127.0.0.4", "--duration", "20s"]);
    until_all(&all, "127.0.0.4", 403, short, within);
    std::thread::sleep(Duration::from_secs(18).saturating_sub(short.elapsed()));
    assert_eq!(
        status_from(&proxies[0], "127.0.0.4", None),
        403,
        "still in force"
    );
    until_all(&all, "127.0.0.4", 200, short, Duration::from_secs(22));

    // The instance that pulls dies (no goodbye): another takes over within three intervals.
    let mut proxies = proxies;
    let puller = proxies
        .iter()
        .position(|p| p.metric("floodgate_crowdsec_pulls_total{result=\"ok\"}") > 0.0)
        .unwrap();
    let mut gone = proxies.remove(puller);
    gone.signal("KILL");
    assert!(gone.wait_exit(Duration::from_secs(5)));
    let killed = Instant::now();
    lapi.cscli(&["decisions", "add", "--ip", "127.0.0.6", "--duration", "1h"]);
    let rest: Vec<&Proxy> = proxies.iter().collect();
    until_all(
        &rest,
        "127.0.0.6",
        403,
        killed,
        INTERVAL * 4 + Duration::from_secs(1),
    );
    until_all(&rest, "127.0.1.5", 403, killed, Duration::from_secs(1));
}

#[test]
fn known_decisions_hold_while_lapi_is_down_and_polling_resumes() {
    let mut lapi = Lapi::start();
    let key = lapi.bouncer_key("floodgate-solo", "solo-key-0123456789abcdef");
    let upstream = Upstream::start();
    let table = crowdsec_table(&lapi, &key, "on_captcha = \"throttle\"");
    let proxy = Proxy::start(&[&upstream.addr], &table);
    let within = INTERVAL + Duration::from_secs(1);
    let added = Instant::now();
    lapi.cscli(&["decisions", "add", "--ip", "127.0.0.2", "--duration", "1h"]);
    lapi.cscli(&[
        "decisions",
        "add",
        "--ip",
        "127.0.0.3",
        "--duration",
        "1h",
        "--type",
        "captcha",
    ]);
    until_all(&[&proxy], "127.0.0.2", 403, added, within);
    until_all(&[&proxy], "127.0.0.3", 429, added, within);
    let throttled = client_from("127.0.0.3")
        .get(proxy.url("/x"))
        .send()
        .unwrap();
    let wait: u64 = throttled.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (3500..=3600).contains(&wait),
        "Retry-After until the decision ends: {wait}"
    );

    lapi.kill();
    let down = Instant::now();
    let mut slowest = Duration::ZERO;
    while down.elapsed() < Duration::from_secs(30) {
        for (address, expected) in [("127.0.0.2", 403), ("127.0.0.3", 429), ("127.0.0.1", 200)] {
            let asked = Instant::now();
            assert_eq!(
                status_from(&proxy, address, None),
                expected,
                "{address} while LAPI is down"
            );
            slowest = slowest.max(asked.elapsed());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        slowest < Duration::from_millis(500),
        "a request waited {slowest:?}"
    );
    assert_eq!(proxy.admin("/readyz").unwrap().status(), 200, "still ready");
    assert!(proxy.metric("floodgate_crowdsec_pulls_total{result=\"error\"}") >= 1.0);
    assert!(proxy.metric("floodgate_crowdsec_last_pull_age_seconds") >= 25.0);
    let complaints = proxy.log().matches("cannot be pulled").count();
    assert!(
        complaints <= 3,
        "logged {complaints} times in 30 s:\n{}",
        proxy.log()
    );

    lapi.restart();
    let back = Instant::now();
    lapi.cscli(&["decisions", "add", "--ip", "127.0.0.5", "--duration", "1h"]);
    until_all(
        &[&proxy],
        "127.0.0.5",
        403,
        back,
        INTERVAL * 3 + Duration::from_secs(1),
    );
    assert_eq!(status_from(&proxy, "127.0.0.2", None), 403);
}

/// A scan of 30 missing paths, a bad user agent and a hunt for secrets, each from its own
/// address, through the front at `port`.
fn scan(port: u16) {
    let url = |path: &str| format!("http://127.0.0.1:{port}{path}");
    let prober = client_from("127.0.0.2");
    for i in 0..30 {
        prober
            .get(url(&format!("/missing-{i}?status=404")))
            .send()
            .unwrap();
    }
    let scanner = client_from("127.0.0.3");
    let agent = "Mozilla/5.00 (Nikto/2.1.6) (Evasions:None) (Test:000003)";
    scanner
        .get(url("/"))
        .header("user-agent", agent)
        .send()
        .unwrap();
    let hunter = client_from("127.0.0.4");
    for path in [
        "/.env",
        "/.git/config",
        "/.htpasswd",
        "/backup.sql",
        "/.aws/config",
    ] {
        hunter
            .get(url(&format!("{path}?status=404")))
            .send()
            .unwrap();
    }
}

/// Waits until `path` holds `lines` lines.
fn until_lines(path: &std::path::Path, lines: usize) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.lines().count() >= lines || Instant::now() > deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn crowdsecs_nginx_parser_finds_in_floodgates_log_what_it_finds_in_nginxs() {
    let lapi = Lapi::start();
    lapi.enable_nginx_collection();
    let upstream = Upstream::start();
    let logs = tempfile::tempdir().unwrap();
    let (ours, theirs) = (
        logs.path().join("floodgate.log"),
        logs.path().join("nginx.log"),
    );
    let server = format!(
        "access_log_format = \"combined\"\naccess_log_file = \"{}\"",
        ours.display()
    );
    let policy = "[[policy]]\nname = \"api\"\ncapacity = 5\nrate = \"1/m\"\n\
                  match = { path_prefix = \"/api/\" }\n";
    let proxy = Proxy::start_with_server(&[&upstream.addr], &server, policy);
    let nginx_server = format!(
        "server {{\n  listen LISTEN;\n  access_log {} combined;\n  \
         location / {{ proxy_pass http://BACKEND; }}\n}}\n",
        theirs.display()
    );
    let nginx = Front::nginx_with(&nginx_server, &upstream.addr, "");
    scan(proxy.port);
    scan(nginx.port);
    // A client that keeps going after it is throttled (nginx's log has no such lines).
    let retrier = client_from("127.0.0.5");
    for _ in 0..100 {
        retrier.get(proxy.url("/api/x")).send().unwrap();
    }
    until_lines(&ours, 136);
    until_lines(&theirs, 36);
    let from_nginx = lapi.replay(&theirs);
    let from_floodgate = lapi.replay(&ours);
    let scenarios: Vec<&str> = from_floodgate.iter().map(|(s, _)| s.as_str()).collect();
    for expected in [
        "crowdsecurity/http-probing",
        "crowdsecurity/http-sensitive-files",
    ] {
        assert!(
            scenarios.contains(&expected),
            "{expected} in {from_floodgate:?}"
        );
    }
    assert_eq!(
        from_floodgate, from_nginx,
        "the same alerts as nginx's log gives"
    );

    // Throttled lines become an alert only with Floodgate's scenario installed.
    let scenario = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/src/crowdsec/floodgate-throttled.yaml");
    lapi.add_scenario(&scenario);
    let opted_in = lapi.replay(&ours);
    let retrier = (
        "floodgate/http-throttled-repeatedly".to_owned(),
        "127.0.0.5".to_owned(),
    );
    assert!(opted_in.contains(&retrier), "{opted_in:?}");
    assert_eq!(opted_in.len(), from_nginx.len() + 1, "{opted_in:?}");
}

#[test]
fn an_answer_over_max_answer_bytes_is_refused_and_logged_while_the_default_cap_applies_it() {
    let lapi = Lapi::start();
    let mut csv = String::from("duration,scope,value\n24h,ip,127.0.0.2\n");
    for i in 0..200 {
        csv.push_str(&format!("24h,ip,10.9.{}.{}\n", i / 250, i % 250 + 1));
    }
    let list = lapi.dir.path().join("list.csv");
    std::fs::write(&list, csv).unwrap();
    lapi.cscli(&["decisions", "import", "-i", list.to_str().unwrap()]);
    let upstream = Upstream::start();
    let started = Instant::now();
    let small = lapi.bouncer_key("floodgate-small", "small-key-0123456789abcdef");
    let capped = Proxy::start(
        &[&upstream.addr],
        &crowdsec_table(&lapi, &small, "max_answer_bytes = 4096"),
    );
    let whole = lapi.bouncer_key("floodgate-whole", "whole-key-0123456789abcdef");
    let default = Proxy::start(&[&upstream.addr], &crowdsec_table(&lapi, &whole, ""));
    until_all(&[&default], "127.0.0.2", 403, started, INTERVAL);
    let refusal = "over crowdsec.max_answer_bytes (4096 bytes)";
    while !capped.log().contains(refusal) {
        assert!(
            started.elapsed() < INTERVAL,
            "no refusal logged:\n{}",
            capped.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        status_from(&capped, "127.0.0.2", None),
        200,
        "nothing was applied"
    );
    assert!(capped.metric("floodgate_crowdsec_pulls_total{result=\"error\"}") >= 1.0);
    assert_eq!(capped.metric("floodgate_crowdsec_decisions"), 0.0);
    assert_eq!(default.metric("floodgate_crowdsec_decisions"), 201.0);
}

#[test]
fn a_captcha_decision_gets_the_challenge_and_a_pass_answers_it() {
    let lapi = Lapi::start();
    let key = lapi.bouncer_key("floodgate-captcha", "captcha-key-0123456789abcdef");
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], &crowdsec_table(&lapi, &key, ""));
    let added = Instant::now();
    lapi.cscli(&[
        "decisions",
        "add",
        "--ip",
        "127.0.0.7",
        "--duration",
        "1h",
        "--type",
        "captcha",
    ]);
    until_all(
        &[&proxy],
        "127.0.0.7",
        403,
        added,
        INTERVAL + Duration::from_secs(1),
    );
    let mut visitor = Visitor::new(&proxy.url(""), "127.0.0.7");
    let json = visitor.send("GET", "/api", &[("accept", "application/json")]);
    assert_eq!(json.status, 403, "what cannot show a page stays banned");
    assert!(json.nonce().is_none());
    let solved = visitor.solve("/x?y=1", Work::Pow(16));
    assert_eq!((solved.status, solved.header("location")), (303, "/x?y=1"));
    assert_eq!(
        visitor.get("/x?y=1").status,
        200,
        "the pass answers the captcha"
    );
    let issued = "floodgate_challenges_total{kind=\"pow\",policy=\"crowdsec\",result=\"issued\"}";
    assert!(proxy.metric(issued) >= 1.0);
}
