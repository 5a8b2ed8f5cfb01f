//! What the managed file enforces: a disallowed path flagged (the access log, the metric, the
//! score's signal) and refused by a deny policy on `robots = "disallowed"`, Googlebot verified
//! by reverse DNS served while GPTBot is refused, and `Crawl-delay: 2` as one request per 2 s.

use super::{
    get, judged, logged, status, CHROME, CURL, DENY_DISALLOWED, GOOGLEBOT, GPTBOT, MANAGED,
};
use crate::common::dns::DnsServer;
use crate::common::{header, Proxy, Upstream};
use std::time::{Duration, Instant};

/// The `[upstream]` keys telling the backend the score and its signals.
const SCORE_HEADERS: &str = "score_header = \"x-bot-score\"\nsignals_header = \"x-bot-signals\"\n";

#[test]
fn gptbot_asking_for_a_disallowed_path_is_flagged_and_refused_by_a_deny_policy() {
    let upstream = Upstream::start();
    let config = format!("{MANAGED}{DENY_DISALLOWED}");
    let proxy = Proxy::start_with_server(&[&upstream.addr], "access_log = true", &config);
    let refused = get(&proxy, "127.0.0.1", "/", GPTBOT);
    assert_eq!(refused.status(), 403);
    let line = logged(&proxy, &refused);
    let body: serde_json::Value = refused.json().expect("a problem");
    assert_eq!(body["policy"], "deny-disallowed", "{body}");
    assert!(body["ref"].is_string(), "{body}");
    assert!(
        line.contains("status=403 decision=denied policy=deny-disallowed")
            && line.contains(" crawler=GPTBot robots=disallowed"),
        "{line}"
    );
    assert_eq!(judged(&proxy, "GPTBot", "disallowed"), 1.0);
    // A browser is never held to the file; curl is, by `*`, which allows `/`.
    let browser = get(&proxy, "127.0.0.1", "/", CHROME);
    assert_eq!(browser.status(), 200);
    assert!(!logged(&proxy, &browser).contains("robots="));
    let curl = get(&proxy, "127.0.0.1", "/", CURL);
    assert_eq!(curl.status(), 200);
    assert!(logged(&proxy, &curl).contains(" robots=allowed"));
    assert_eq!(upstream.served(), 2);

    // Without the policy: flagged, and served, with the score's signal.
    let config = format!("{SCORE_HEADERS}{MANAGED}");
    let proxy = Proxy::start_with_server(&[&upstream.addr], "access_log = true", &config);
    let served = get(&proxy, "127.0.0.1", "/", GPTBOT);
    assert_eq!(served.status(), 200);
    let line = logged(&proxy, &served);
    assert!(line.contains(" robots=disallowed"), "{line}");
    let signals = upstream.last_header("x-bot-signals").join(",");
    assert!(signals.contains("robots-disallowed"), "{signals}");
    assert!(line.contains("robots-disallowed"), "{line}");
    assert_eq!(judged(&proxy, "GPTBot", "disallowed"), 1.0);
}

#[test]
fn googlebot_verified_by_reverse_dns_is_served_while_gptbot_is_refused() {
    let dns = DnsServer::start(&[
        ("127.0.8.5", "PTR", "crawl-127-0-8-5.googlebot.com"),
        ("crawl-127-0-8-5.googlebot.com", "A", "127.0.8.5"),
    ]);
    let upstream = Upstream::start();
    let config = format!(
        "[bots]\nresolver = \"{}\"\n{MANAGED}{DENY_DISALLOWED}",
        dns.addr
    );
    let proxy = Proxy::start_with_server(&[&upstream.addr], "access_log = true", &config);
    // Verified, Googlebot is held to `*`'s rules but not to its crawl delay (Google ignores
    // Crawl-delay): two requests in a row pass.
    for _ in 0..2 {
        assert_eq!(status(&proxy, "127.0.8.5", "/", GOOGLEBOT), 200);
    }
    assert_eq!(status(&proxy, "127.0.8.5", "/admin/x", GOOGLEBOT), 403);
    assert_eq!(judged(&proxy, "Googlebot", "allowed"), 2.0);
    assert_eq!(judged(&proxy, "Googlebot", "disallowed"), 1.0);
    let gptbot = get(&proxy, "127.0.8.6", "/", GPTBOT);
    assert_eq!(gptbot.status(), 403);
    assert!(logged(&proxy, &gptbot).contains(" robots=disallowed"));
    // An impostor (no reverse name) is held to the delay by `*`, by its address.
    assert_eq!(status(&proxy, "127.0.8.7", "/", GOOGLEBOT), 200);
    assert_eq!(status(&proxy, "127.0.8.7", "/", GOOGLEBOT), 429);
    let log = proxy.log();
    assert!(
        log.lines()
            .any(|l| l.contains("bot=search-engine crawler=Googlebot robots=allowed")),
        "{log}"
    );
}

#[test]
fn a_crawl_delay_of_2s_lets_one_request_through_every_2s() {
    let upstream = Upstream::start();
    let proxy = Proxy::start_with_server(&[&upstream.addr], "access_log = true", MANAGED);
    let first = get(&proxy, "127.0.9.1", "/a", CURL);
    let started = Instant::now();
    assert_eq!(first.status(), 200);
    let named = header(&first, "ratelimit-policy");
    assert!(named.contains("robots-crawl-delay"), "{named}");
    let second = get(&proxy, "127.0.9.1", "/b", CURL);
    assert_eq!(second.status(), 429);
    let retry_after: u64 = header(&second, "retry-after").parse().expect("Retry-After");
    assert!((1..=2).contains(&retry_after), "{retry_after}");
    assert!(header(&second, "ratelimit-policy").contains("robots-crawl-delay"));
    let line = logged(&proxy, &second);
    assert!(line.contains("policy=robots-crawl-delay"), "{line}");
    // A browser is never paced; curl elsewhere has its own delay (its claim is checked by
    // nothing: by operator, it held every curl in the world to one request per 2 s).
    assert_eq!(status(&proxy, "127.0.9.1", "/c", CHROME), 200);
    assert_eq!(status(&proxy, "127.0.9.2", "/c", CURL), 200);
    // After the delay, one more.
    std::thread::sleep(Duration::from_secs(2).saturating_sub(started.elapsed()));
    assert_eq!(status(&proxy, "127.0.9.1", "/d", CURL), 200);
    assert_eq!(status(&proxy, "127.0.9.1", "/e", CURL), 429);
}
