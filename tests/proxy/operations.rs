//! Operating the proxy: reload under traffic, refused reloads, graceful shutdown, metrics that
//! Prometheus accepts.

use crate::common;

use common::prometheus::Prometheus;
use common::wait::eventually;
use common::{requests_series, Proxy, Upstream};
use std::time::{Duration, Instant};

fn policy(capacity: u64) -> String {
    format!("[identity]\nsources = [\"header:x-api-key\"]\n\n[[policy]]\nname = \"p\"\ncapacity = {capacity}\nrate = \"1/h\"\n")
}

#[test]
fn a_reload_changes_a_limit_without_failing_an_in_flight_request() {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], &policy(2));
    let slow_url = proxy.url("/slow?ms=1500");
    std::thread::scope(|scope| {
        let in_flight = scope.spawn(|| {
            reqwest::blocking::Client::new()
                .get(&slow_url)
                .header("x-api-key", "slow")
                .send()
                .map(|r| r.status().as_u16())
        });
        let under_way = eventually(Duration::from_secs(10), || upstream.served() > 0);
        assert!(under_way, "the slow request reached the upstream");
        proxy.rewrite_config(|text| text.replace("capacity = 2", "capacity = 4"));
        proxy.reload("success");
        assert_eq!(
            in_flight
                .join()
                .unwrap()
                .expect("the in-flight request was answered"),
            200
        );
    });
    let statuses: Vec<u16> = (0..6)
        .map(|_| proxy.get("/", &[("x-api-key", "a")]).status().as_u16())
        .collect();
    assert_eq!(
        statuses,
        [200, 200, 200, 200, 429, 429],
        "the new capacity applies"
    );
}

#[test]
fn buckets_survive_a_reload_of_an_unchanged_policy() {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], &policy(2));
    assert_eq!(proxy.get("/", &[("x-api-key", "a")]).status(), 200);
    assert_eq!(proxy.get("/", &[("x-api-key", "a")]).status(), 200);
    proxy.rewrite_config(|text| {
        text.replace(
            "[[policy]]",
            "[access]\ndeny = [\"header:x-api-key=evil\"]\n\n[[policy]]",
        )
    });
    proxy.reload("success");
    assert_eq!(
        proxy.get("/", &[("x-api-key", "a")]).status(),
        429,
        "the bucket was kept"
    );
    assert_eq!(
        proxy.get("/", &[("x-api-key", "evil")]).status(),
        403,
        "the new list applies"
    );
}

#[test]
fn a_broken_file_on_reload_keeps_the_old_config_and_counts_a_failure() {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], &policy(1));
    proxy.rewrite_config(|text| text.replace("rate = \"1/h\"", "rate = \"fast\""));
    proxy.reload("failure");
    assert_eq!(proxy.get("/", &[("x-api-key", "a")]).status(), 200);
    assert_eq!(
        proxy.get("/", &[("x-api-key", "a")]).status(),
        429,
        "the old policy still serves"
    );
    assert!(
        proxy.log().contains("refused; the running config stays"),
        "{}",
        proxy.log()
    );
    proxy.rewrite_config(|text| {
        text.replace("rate = \"fast\"", "rate = \"1/h\"")
            .replace("127.0.0.1:", "127.0.0.2:")
    });
    proxy.reload("success");
    assert!(
        proxy
            .log()
            .contains("`server.listen` changed; it takes effect only after a restart"),
        "{}",
        proxy.log()
    );
}

#[test]
fn sigterm_lets_in_flight_requests_finish() {
    let upstream = Upstream::start();
    let mut proxy =
        Proxy::start_with_server(&[&upstream.addr], "grace_period = \"2s\"", &policy(100));
    let slow_url = proxy.url("/slow?ms=1000");
    let started = Instant::now();
    let status = std::thread::scope(|scope| {
        let in_flight = scope.spawn(|| {
            reqwest::blocking::Client::new()
                .get(&slow_url)
                .header("x-api-key", "a")
                .send()
                .map(|r| r.status().as_u16())
        });
        let under_way = eventually(Duration::from_secs(10), || upstream.served() > 0);
        assert!(under_way, "the slow request reached the upstream");
        proxy.signal("TERM");
        in_flight.join().unwrap()
    });
    assert_eq!(status.expect("answered despite the shutdown"), 200);
    assert!(started.elapsed() >= Duration::from_millis(1000));
    assert!(
        proxy.wait_exit(Duration::from_secs(15)),
        "the process exits after draining"
    );
}

#[test]
fn promtool_accepts_the_metrics() {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], &policy(1));
    proxy.get("/", &[("x-api-key", "a")]);
    proxy.get("/", &[("x-api-key", "a")]);
    assert_eq!(proxy.metric(&requests_series("p", "throttled")), 1.0);
    let text = proxy.admin("/metrics").unwrap().text().unwrap();
    let mut child = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("promtool (package prometheus; scripts/test installs it)");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_real_prometheus_scrapes_the_admin_listener_and_sees_throttling_rise() {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], &policy(1));
    let prometheus = Prometheus::start(&format!("127.0.0.1:{}", proxy.admin_port));
    let query = "sum(floodgate_requests_total{decision=\"throttled\"})";
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut sent = 0;
    loop {
        proxy.get("/", &[("x-api-key", "bot")]);
        sent += 1;
        if prometheus.query(query).is_some_and(|v| v >= 3.0) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Prometheus never saw the throttled counter rise"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(sent >= 4);
    assert_eq!(prometheus.query("up{job=\"floodgate\"}"), Some(1.0));
}

#[test]
fn the_top_offenders_view_lists_a_flooding_identity_first() {
    let upstream = Upstream::start();
    // A configured hash key, so the test can work out the bot's digest as an operator would.
    let secret = "an operator's identity hash key, 32+ bytes";
    let config = policy(1).replace(
        "[identity]\n",
        &format!("[identity]\nhash_key = \"{secret}\"\n"),
    );
    let proxy = Proxy::start_with_server(&[&upstream.addr], "access_log = true", &config);
    for round in 0..40 {
        proxy.get("/", &[("x-api-key", "the-bot")]);
        proxy.get("/", &[("x-api-key", &format!("visitor-{}", round % 8))]);
    }
    let json: serde_json::Value = proxy.admin("/offenders").unwrap().json().unwrap();
    let first = &json["offenders"][0];
    use floodgate::identity::{Identity, IdentityKey};
    let key = IdentityKey::from_secret(secret).unwrap();
    let bot = Identity::of(&key, "header:x-api-key", b"the-bot").hex();
    assert_eq!(first["identity"], bot[..16], "{json}");
    assert_eq!(first["throttled"], 39);
    assert_eq!(first["policy"], "p");
    let text = proxy
        .admin("/offenders?format=text")
        .unwrap()
        .text()
        .unwrap();
    assert!(
        text.lines().nth(1).unwrap().starts_with(&bot[..16]),
        "{text}"
    );
    assert!(
        !text.contains("the-bot") && !json.to_string().contains("the-bot"),
        "never in the clear"
    );
    // The access log has one line per request, with the identity only as a digest prefix.
    let log = proxy.log();
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("floodgate::access"))
        .collect();
    assert_eq!(lines.len(), 80, "{log}");
    assert!(lines
        .iter()
        .any(|l| l.contains("status=429 decision=throttled policy=p identity=")));
    assert!(!log.contains("the-bot"));
}
