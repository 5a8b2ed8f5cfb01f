//! Crawlers end to end: claims by User-Agent, verified by published ranges or by reverse DNS
//! confirmed forward (a dnslib server on loopback), spoofed claims denied, a silent DNS server
//! never holding a request past `bots.dns_timeout`, and `unless` letting verified crawlers off
//! a per-address limit.

use super::curl::{curl, Curl};
use crate::common::dns::{DnsServer, SilentDns};
use crate::common::{Proxy, Upstream};
use std::path::Path;
use std::time::Duration;

const GOOGLEBOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const GPTBOT: &str = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; \
                      +https://openai.com/gptbot)";

/// Writes `name`.json into `dir` in Google's format, holding `prefixes`.
fn ranges_file(dir: &Path, name: &str, prefixes: &[&str]) {
    let prefixes: Vec<serde_json::Value> = prefixes
        .iter()
        .map(|p| serde_json::json!({ "ipv4Prefix": p }))
        .collect();
    let json = serde_json::json!({ "creationTime": "2026-11-27T00:00:00", "prefixes": prefixes });
    std::fs::write(dir.join(format!("{name}.json")), json.to_string()).expect("ranges file");
}

/// Verified search engines pass; everyone else, Googlebot's impostors included, has 2 a day.
fn search_engines_past_an_anonymous_limit(resolver: &str, ranges_dir: &Path) -> String {
    format!(
        r#"
[bots]
resolver = "{resolver}"
ranges_dir = "{}"

[[policy]]
name = "impostors"
action = "deny"
match = {{ bot = ["spoofed"] }}

[[policy]]
name = "search-engines"
action = "allow"
match = {{ bot = ["search-engine"], verified = true }}

[[policy]]
name = "anonymous"
capacity = 2
rate = "2/d"
sources = ["ip"]
"#,
        ranges_dir.display()
    )
}

#[test]
fn googlebot_verified_by_ranges_or_reverse_dns_passes_and_an_impostor_is_denied_as_spoofed() {
    let dns = DnsServer::start(&[
        ("127.0.6.5", "PTR", "crawl-127-0-6-5.googlebot.com"),
        ("crawl-127-0-6-5.googlebot.com", "A", "127.0.6.5"),
        // Points at a Google name that does not resolve back to the address.
        ("127.0.6.6", "PTR", "crawl-127-0-6-99.googlebot.com"),
        ("crawl-127-0-6-99.googlebot.com", "A", "127.0.6.99"),
    ]);
    let upstream = Upstream::start();
    let ranges = tempfile::tempdir().expect("temp dir");
    ranges_file(ranges.path(), "googlebot", &["127.0.6.16/28"]);
    // Counts, refusing nothing, the requests `match.bot = ["search-engine"]` takes (first, so
    // that no deny decides before it).
    let claims = "[[policy]]\nname = \"claims\"\naction = \"deny\"\nshadow = true\n\
                  match = { bot = [\"search-engine\"] }\n";
    let config = claims.to_owned()
        + &search_engines_past_an_anonymous_limit(&dns.addr.to_string(), ranges.path());
    let proxy = Proxy::start_with_server(&[&upstream.addr], "access_log = true", &config);
    let url = proxy.url("/");
    let from = |address: &str, agent: &str| curl(&Curl::get(&url).from(address).agent(agent));
    // The anonymous limit holds a browser from the same neighbourhood.
    let browser = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0";
    let statuses: Vec<u16> = (0..4).map(|_| from("127.0.6.17", browser).status).collect();
    assert_eq!(statuses, [200, 200, 429, 429]);
    // In the published range, and by reverse DNS confirmed forward: past the limit.
    for address in ["127.0.6.17", "127.0.6.5"] {
        for _ in 0..5 {
            assert_eq!(from(address, GOOGLEBOT).status, 200, "{address}");
        }
    }
    // In neither: spoofed, refused, and the body says so.
    for address in ["127.0.6.6", "127.0.6.7"] {
        let answer = from(address, GOOGLEBOT);
        assert_eq!(answer.status, 403, "{address}: {}", answer.body);
        let body: serde_json::Value = serde_json::from_str(&answer.body).expect("problem json");
        assert_eq!(body["policy"], "impostors");
        assert_eq!(body["bot"], "spoofed");
    }
    let series = |category: &str, verified: &str| {
        format!("floodgate_bot_requests_total{{category=\"{category}\",verified=\"{verified}\"}}")
    };
    assert_eq!(proxy.metric(&series("search-engine", "true")), 10.0);
    assert_eq!(proxy.metric(&series("spoofed", "false")), 2.0);
    // Issue 82: a spoofed claim matches `bot = ["spoofed"]` only, never the category it
    // claimed (bots.md said it still did): the ten verified requests, not the impostors'.
    let taken = "floodgate_requests_total{decision=\"shadow_denied\",policy=\"claims\"}";
    assert_eq!(proxy.metric(taken), 10.0);
    let log = proxy.log();
    let line = log
        .lines()
        .find(|l| l.contains("status=403"))
        .expect("the impostor's line in the access log");
    assert!(
        line.contains("decision=denied policy=impostors")
            && line.ends_with("bot=spoofed crawler=Googlebot"),
        "{line}"
    );
    assert!(
        dns.queries().iter().any(|q| q.contains("in-addr.arpa")),
        "reverse DNS was asked: {:?}",
        dns.queries()
    );
}

#[test]
fn gptbot_from_three_addresses_shares_one_bucket_by_operator() {
    let upstream = Upstream::start();
    let ranges = tempfile::tempdir().expect("temp dir");
    ranges_file(ranges.path(), "gptbot", &["127.0.7.0/24"]);
    let config = format!(
        r#"
[bots]
ranges_dir = "{}"

[[policy]]
name = "ai-crawlers"
capacity = 6
rate = "1/h"
sources = ["bot", "ip"]
match = {{ bot = ["ai-crawler"] }}
"#,
        ranges.path().display()
    );
    let proxy = Proxy::start(&[&upstream.addr], &config);
    let url = proxy.url("/");
    let statuses: Vec<u16> = (0..9)
        .map(|i| {
            let address = format!("127.0.7.{}", 1 + i % 3);
            curl(&Curl::get(&url).from(&address).agent(GPTBOT)).status
        })
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        6,
        "{statuses:?}"
    );
    assert!(statuses[6..].iter().all(|s| *s == 429), "{statuses:?}");
    // A browser from the same addresses is not OpenAI's.
    let browser = curl(
        &Curl::get(&url)
            .from("127.0.7.1")
            .agent("Mozilla/5.0 Firefox/140.0"),
    );
    assert_eq!(browser.status, 200);
}

#[test]
fn an_unverified_claim_falls_through_to_the_address_and_never_drains_the_operators_bucket() {
    let dns = DnsServer::start(&[
        ("127.0.11.5", "PTR", "crawl-127-0-11-5.googlebot.com"),
        ("crawl-127-0-11-5.googlebot.com", "A", "127.0.11.5"),
        // The resolver fails for this one: the claim can be neither verified nor refuted.
        ("127.0.11.6", "SERVFAIL", ""),
    ]);
    let upstream = Upstream::start();
    let config = format!(
        r#"
[bots]
resolver = "{}"

[[policy]]
name = "crawlers"
capacity = 3
rate = "1/h"
sources = ["bot", "ip"]
"#,
        dns.addr
    );
    let proxy = Proxy::start(&[&upstream.addr], &config);
    let url = proxy.url("/");
    let statuses = |address: &str, agent: &str, n: usize| -> Vec<u16> {
        (0..n)
            .map(|_| curl(&Curl::get(&url).from(address).agent(agent)).status)
            .collect()
    };
    // Googlebot's name from an address whose reverse DNS fails: unverified, so limited by its
    // address, not in Google's bucket.
    assert_eq!(statuses("127.0.11.6", GOOGLEBOT, 4), [200, 200, 200, 429]);
    // The verified Googlebot still has all of Google's.
    assert_eq!(statuses("127.0.11.5", GOOGLEBOT, 4), [200, 200, 200, 429]);
    // GPTBot publishes ranges, none loaded here: no claim of it can be verified, so each
    // address has its own bucket and none is OpenAI's.
    assert_eq!(statuses("127.0.11.7", GPTBOT, 3), [200, 200, 200]);
    assert_eq!(statuses("127.0.11.8", GPTBOT, 1), [200]);
    let unverified = r#"floodgate_bot_requests_total{category="search-engine",verified="false"}"#;
    assert_eq!(proxy.metric(unverified), 4.0);
}

#[test]
fn unless_lets_verified_ai_crawlers_off_the_per_address_limit_and_no_one_else() {
    let upstream = Upstream::start();
    let ranges = tempfile::tempdir().expect("temp dir");
    ranges_file(ranges.path(), "gptbot", &["127.0.9.0/24"]);
    let config = format!(
        r#"
[bots]
ranges_dir = "{}"

[[policy]]
name = "ai-crawlers"
capacity = 6
rate = "1/h"
sources = ["bot", "ip"]
match = {{ bot = ["ai-crawler"] }}

[[policy]]
name = "anonymous"
capacity = 2
rate = "1/h"
sources = ["ip"]
unless = {{ bot = ["ai-crawler"], verified = true }}
"#,
        ranges.path().display()
    );
    let proxy = Proxy::start(&[&upstream.addr], &config);
    let url = proxy.url("/");
    let statuses = |address: &str, agent: &str| -> Vec<u16> {
        (0..8)
            .map(|_| curl(&Curl::get(&url).from(address).agent(agent)).status)
            .collect()
    };
    // From one address, GPTBot has its operator's 6, not the anonymous 2.
    assert_eq!(
        statuses("127.0.9.1", GPTBOT),
        [200, 200, 200, 200, 200, 200, 429, 429]
    );
    // A browser from another address in the range is held by the anonymous limit.
    let browser = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0";
    assert_eq!(
        statuses("127.0.9.2", browser),
        [200, 200, 429, 429, 429, 429, 429, 429]
    );
    // GPTBot's name from outside its ranges is not let off.
    assert_eq!(
        statuses("127.0.10.1", GPTBOT),
        [200, 200, 429, 429, 429, 429, 429, 429]
    );
}

#[test]
fn a_dns_server_that_stops_answering_leaves_requests_answered_within_dns_timeout() {
    let silent = SilentDns::start();
    let upstream = Upstream::start();
    let config = format!(
        r#"
[bots]
resolver = "{}"

[[policy]]
name = "impostors"
action = "deny"
match = {{ bot = ["spoofed"] }}

[[policy]]
name = "crawlers"
capacity = 3
rate = "1/h"
sources = ["bot", "ip"]
"#,
        silent.addr
    );
    let proxy = Proxy::start(&[&upstream.addr], &config);
    let url = proxy.url("/");
    for i in 1..=4 {
        let answer = curl(
            &Curl::get(&url)
                .from(&format!("127.0.8.{i}"))
                .agent(GOOGLEBOT),
        );
        // Unverified, not spoofed: the request goes through, within the 200 ms timeout (and
        // what curl and a busy machine add), limited by its address, not in Google's bucket
        // (three would have emptied it).
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert!(
            answer.took < Duration::from_millis(1500),
            "took {:?}",
            answer.took
        );
    }
    let unverified = r#"floodgate_bot_requests_total{category="search-engine",verified="false"}"#;
    assert_eq!(proxy.metric(unverified), 4.0);
}
