//! Issue 58, first part, end to end: policies matching what a request shows (headers,
//! User-Agent, client network) and what they do (`limit`, `deny`, `allow`, in shadow mode
//! too), through the real binary and through the decision endpoint.

use crate::common;

use common::{client_from, free_port, requests_series, Proxy, Upstream};
use reqwest::blocking::Client;
use std::time::{Duration, Instant};

/// How many of `n` requests of one burst `send` got a 200.
fn admitted(n: usize, send: impl Fn() -> u16) -> usize {
    (0..n).map(|_| send()).filter(|s| *s == 200).count()
}

/// Asserts that a burst of `n` requests admits exactly `capacity`, plus what a bucket refilled
/// at `per_minute` gave back while the burst was sent (a busy machine sends slowly).
fn exactly(capacity: usize, per_minute: f64, n: usize, send: impl Fn() -> u16) {
    let started = Instant::now();
    let got = admitted(n, send);
    let refilled = (started.elapsed().as_secs_f64() * per_minute / 60.0).floor() as usize;
    assert!(
        (capacity..=capacity + refilled).contains(&got),
        "{got} admitted; {capacity} plus {refilled} refilled expected"
    );
}

fn status(client: &Client, url: &str, headers: &[(&str, &str)]) -> u16 {
    let mut req = client.get(url);
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    req.send().expect("a response").status().as_u16()
}

const KEYED_AND_ANONYMOUS: &str = r#"
[[policy]]
name = "keyed"
capacity = 100
rate = "100/m"
sources = ["header:x-api-key"]
match = { headers = { "x-api-key" = true } }

[[policy]]
name = "anonymous"
capacity = 10
rate = "10/m"
sources = ["ip"]
match = { headers = { "X-Api-Key" = false } }
"#;

#[test]
fn keyed_callers_get_100_a_minute_and_anonymous_ones_10_by_address() {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], KEYED_AND_ANONYMOUS);
    let url = proxy.url("/");
    let local = client_from("127.0.0.1");
    exactly(100, 100.0, 110, || {
        status(&local, &url, &[("x-api-key", "alice")])
    });
    // The key's bucket is not the address's.
    exactly(10, 10.0, 15, || status(&local, &url, &[]));
    let other = client_from("127.0.0.2");
    exactly(10, 10.0, 15, || status(&other, &url, &[]));
    assert_eq!(
        admitted(3, || status(&other, &url, &[("x-api-key", "bob")])),
        3
    );
}

const NO_BOTS: &str = r#"
[[policy]]
name = "no-bots"
action = "deny"
match = { user_agent = "(?i)badbot" }

[[policy]]
name = "everyone"
capacity = 3
rate = "1/h"
"#;

#[test]
fn a_denied_user_agent_gets_403_naming_the_policy_and_takes_nothing() {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], NO_BOTS);
    for _ in 0..5 {
        let refused = proxy.get("/", &[("user-agent", "BadBot/2.0")]);
        assert_eq!(refused.status(), 403);
        let kind = refused.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_owned();
        assert_eq!(kind, "application/problem+json");
        let body: serde_json::Value = refused.json().unwrap();
        assert_eq!(body["policy"], "no-bots");
    }
    let fine = admitted(4, || {
        proxy
            .get("/", &[("user-agent", "curl/8")])
            .status()
            .as_u16()
    });
    assert_eq!(fine, 3, "the denied requests took nothing from `everyone`");
    assert_eq!(proxy.get("/", &[]).status(), 429, "no UA: not denied");
    assert_eq!(upstream.served(), 3);
    assert_eq!(proxy.metric(&requests_series("no-bots", "denied")), 5.0);
}

#[test]
fn an_allowed_network_skips_a_limit_it_would_otherwise_hit() {
    let upstream = Upstream::start();
    let config = "[[policy]]\nname = \"office\"\naction = \"allow\"\n\
                  match = { networks = [\"127.0.0.2/32\"] }\n\n\
                  [[policy]]\nname = \"everyone\"\ncapacity = 2\nrate = \"1/h\"\n\n\
                  [[policy]]\nname = \"no-debug\"\naction = \"deny\"\n\
                  match = { headers = { \"x-debug\" = true } }\n";
    let proxy = Proxy::start(&[&upstream.addr], config);
    let url = proxy.url("/");
    let office = client_from("127.0.0.2");
    assert_eq!(admitted(10, || status(&office, &url, &[])), 10);
    let debug = status(&office, &url, &[("x-debug", "1")]);
    assert_eq!(debug, 403, "deny policies come before allow policies");
    let outside = client_from("127.0.0.3");
    assert_eq!(admitted(5, || status(&outside, &url, &[])), 2);
    let allowed = proxy.metric(&requests_series("office", "allowed_by_rule"));
    assert_eq!(allowed, 10.0);
}

#[test]
fn a_deny_in_shadow_mode_lets_everything_through_and_counts_it() {
    let upstream = Upstream::start();
    let config = "[[policy]]\nname = \"no-curl\"\naction = \"deny\"\nshadow = true\n\
                  match = { user_agent = \"^curl/\" }\n";
    let proxy = Proxy::start(&[&upstream.addr], config);
    for _ in 0..4 {
        assert_eq!(proxy.get("/", &[("user-agent", "curl/8.5")]).status(), 200);
    }
    assert_eq!(upstream.served(), 4);
    let shadow = proxy.metric(&requests_series("no-curl", "shadow_denied"));
    assert_eq!(shadow, 4.0);
    assert_eq!(proxy.metric(&requests_series("no-curl", "denied")), 0.0);
}

#[test]
fn the_decision_endpoint_honours_a_deny() {
    let upstream = Upstream::start();
    let port = free_port();
    let config = format!("{NO_BOTS}\n[check]\nlisten = \"127.0.0.1:{port}\"\n");
    let _proxy = Proxy::start(&[&upstream.addr], &config);
    let check = format!("http://127.0.0.1:{port}/");
    let http = client_from("127.0.0.1");
    assert_eq!(status(&http, &check, &[("user-agent", "BadBot")]), 403);
    assert_eq!(status(&http, &check, &[("user-agent", "curl/8")]), 200);
}

#[test]
fn a_bad_rule_on_reload_keeps_the_old_config() {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], NO_BOTS);
    proxy.rewrite_config(|text| text.replace("(?i)badbot", "(badbot"));
    let failures = "floodgate_config_reloads_total{result=\"failure\"}";
    let before = proxy.metric(failures);
    proxy.signal("HUP");
    let deadline = Instant::now() + Duration::from_secs(10);
    while proxy.metric(failures) == before {
        assert!(Instant::now() < deadline, "no failed reload counted");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        proxy.log().contains("`policy.match.user_agent`"),
        "{}",
        proxy.log()
    );
    assert_eq!(proxy.get("/", &[("user-agent", "BadBot")]).status(), 403);
}

/// The User-Agent of Chrome 156 on Linux.
const CHROME: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
                      Chrome/156.0.0.0 Safari/537.36";

/// Issue 83: the proxy and the decision endpoint build a request's facts in one place, so the
/// JA4 a trusted proxy tells (`identity.ja4_header`) scores the same at both doors: curl's JA4
/// under Chrome's User-Agent shows `ua-tls-mismatch` and is denied by either; Chrome's own JA4
/// is let through by either.
#[test]
fn a_trusted_proxys_ja4_scores_the_same_at_both_doors() {
    let upstream = Upstream::start();
    let port = free_port();
    let config = format!(
        "[identity]\nja4_header = \"x-ja4\"\n\n[identity.ip]\ntrusted_proxies = [\"127.0.0.1/32\"]\n\n\
         [[policy]]\nname = \"fake-chrome\"\naction = \"deny\"\n\
         match = {{ signals = [\"ua-tls-mismatch\"] }}\n\n\
         [check]\nlisten = \"127.0.0.1:{port}\"\n"
    );
    let proxy = Proxy::start(&[&upstream.addr], &config);
    let check = format!("http://127.0.0.1:{port}/");
    let http = client_from("127.0.0.1");
    let request = |ja4: &'static str| {
        [
            ("user-agent", CHROME),
            ("accept-language", "en"),
            ("x-ja4", ja4),
        ]
    };
    let curl = request("t13d3112h2_e8f1e7e78f70_0123456789ab");
    let chrome = request("t13d1517h2_8daaf6152771_02713d6af862");
    for (door, url) in [("proxy", proxy.url("/")), ("decision endpoint", check)] {
        assert_eq!(status(&http, &url, &curl), 403, "{door}: curl's JA4");
        assert_eq!(status(&http, &url, &chrome), 200, "{door}: Chrome's JA4");
    }
}
