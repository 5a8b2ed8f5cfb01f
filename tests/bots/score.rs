//! The bot score's network and crawler signals end to end, with curl leaving from 127.0.x.y
//! addresses: a listed hosting network (shipped, or added by `[bots.score] hosting_asns`)
//! shows `hosting-network`; a crawler claim that fails its check shows `spoofed`, one whose
//! check cannot finish `unverified-crawler`; the backend is told both headers; a browser's
//! User-Agent written in another case keeps its family; a bad `[bots.score]` is refused where
//! it stands at `--test` and on reload; `match.signals` denies curl with Chrome's User-Agent
//! over the TLS listener, and no other signal.

use super::curl::{curl, Curl};
use crate::common::dns::DnsServer;
use crate::common::geo::write_asn_db;
use crate::common::{floodgate_bin, Proxy, Upstream};
use std::path::Path;
use std::process::Command;

const GOOGLEBOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const GPTBOT: &str = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; \
                      +https://openai.com/gptbot)";

/// The `[upstream]` keys telling the backend the score and the signals.
const HEADERS: &str = "score_header = \"x-bot-score\"\nsignals_header = \"x-bot-signals\"\n";

/// The score and signals the backend was told for the request curl sends from `address` as
/// `agent` (curl's own when `None`).
fn told(proxy: &Proxy, upstream: &Upstream, address: &str, agent: Option<&str>) -> String {
    let url = proxy.url("/");
    let mut request = Curl::get(&url).from(address);
    if let Some(agent) = agent {
        request = request.agent(agent);
    }
    assert_eq!(curl(&request).status, 200, "{address}");
    let score = upstream.last_header("x-bot-score");
    let signals = upstream.last_header("x-bot-signals");
    format!("{} {}", score.join(","), signals.join(","))
}

#[test]
fn a_listed_hosting_network_shows_hosting_network() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let db = write_asn_db(
        dir.path(),
        &[
            ("127.0.7.0/24", 64500),
            ("127.0.8.0/24", 64501),
            ("127.0.9.0/24", 16509),
        ],
    );
    let config = format!(
        "{HEADERS}\n[geo]\nasn_db = \"{}\"\n\n[bots.score]\nhosting_asns = [64500]\n",
        db.display()
    );
    let proxy = Proxy::start_with_server(&[&upstream.addr], "access_log = true", &config);
    assert_eq!(
        told(&proxy, &upstream, "127.0.7.1", None),
        "20 hosting-network"
    );
    assert_eq!(
        told(&proxy, &upstream, "127.0.9.1", None),
        "20 hosting-network",
        "AS16509 (AWS) is on the shipped list"
    );
    assert_eq!(told(&proxy, &upstream, "127.0.8.1", None), "0 -");
    let log = proxy.log();
    assert!(log.contains(" score=20 signals=hosting-network"), "{log}");
}

#[test]
fn a_browser_user_agent_in_lower_case_is_held_to_its_family() {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], HEADERS);
    let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0";
    let chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
                  Chrome/156.0.0.0 Safari/537.36";
    // Sent without Accept-Language, which every browser sends.
    for agent in [firefox, chrome] {
        for written in [agent.to_owned(), agent.to_lowercase(), agent.to_uppercase()] {
            assert_eq!(
                told(&proxy, &upstream, "127.0.0.1", Some(&written)),
                "20 missing-browser-headers",
                "{written}"
            );
        }
    }
}

/// Writes Googlebot's ranges (`prefixes`) into `dir`, as `floodgate bots update` does.
fn googlebot_ranges(dir: &Path, prefixes: &[&str]) {
    let prefixes: Vec<serde_json::Value> = prefixes
        .iter()
        .map(|p| serde_json::json!({ "ipv4Prefix": p }))
        .collect();
    let json = serde_json::json!({ "creationTime": "2026-11-28T00:00:00", "prefixes": prefixes });
    std::fs::write(dir.join("googlebot.json"), json.to_string()).expect("ranges file");
}

#[test]
fn a_failed_crawler_claim_shows_spoofed_and_an_unfinished_one_unverified_crawler() {
    let dns = DnsServer::start(&[]);
    let upstream = Upstream::start();
    let ranges = tempfile::tempdir().expect("temp dir");
    googlebot_ranges(ranges.path(), &["127.0.6.16/28"]);
    let config = format!(
        "{HEADERS}\n[bots]\nresolver = \"{}\"\nranges_dir = \"{}\"\n",
        dns.addr,
        ranges.path().display()
    );
    let proxy = Proxy::start(&[&upstream.addr], &config);
    assert_eq!(
        told(&proxy, &upstream, "127.0.6.17", Some(GOOGLEBOT)),
        "0 -",
        "in Googlebot's ranges"
    );
    assert_eq!(
        told(&proxy, &upstream, "127.0.6.5", Some(GOOGLEBOT)),
        "80 spoofed",
        "in no range, no reverse DNS"
    );
    // GPTBot publishes ranges only, and they are not loaded: the check cannot be made.
    assert_eq!(
        told(&proxy, &upstream, "127.0.6.5", Some(GPTBOT)),
        "30 unverified-crawler"
    );
}

#[test]
fn a_bad_score_table_is_refused_where_it_stands_at_test_and_on_reload() {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], HEADERS);
    let bad = "\n[bots.score]\nweights = { robot = 10 }\n";
    proxy.rewrite_config(|config| config.to_owned() + bad);
    proxy.reload("failure");
    let log = proxy.log();
    assert!(
        log.contains("`bots.score.weights`: `robot` is not a signal"),
        "{log}"
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("floodgate.toml");
    let text = "[server]\nlisten = \"127.0.0.1:1\"\n\n[upstream]\nbackends = [\"127.0.0.1:2\"]\n\
                score_header = \"Host\"\n";
    std::fs::write(&path, text).unwrap();
    let out = Command::new(floodgate_bin())
        .arg("--test")
        .arg("--config")
        .arg(&path)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    let at = format!(
        "{}:6:16: `upstream.score_header`: `Host` has another use",
        path.display()
    );
    assert!(said.contains(&at), "{said}");
}

/// The User-Agent of Chrome 156 on Linux.
const CHROME: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
                      Chrome/156.0.0.0 Safari/537.36";

/// The status curl gets for `url` (over TLS, trusting `ca`) sending `headers`.
fn status_over_tls(url: &str, ca: &Path, headers: &[&str]) -> String {
    let mut command = Command::new("curl");
    command.args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--http1.1"]);
    command.arg("--cacert").arg(ca);
    for header in headers {
        command.args(["-H", header]);
    }
    let out = command.arg(url).output().expect("curl runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Issue 82: "deny a Chrome User-Agent whose TLS is not Chrome's" is one signal, which a
/// policy matches alone (`match.signals`): curl with Chrome's User-Agent over TLS is denied;
/// curl as itself, and Chrome's User-Agent without its headers over plain HTTP (another
/// signal, the same score band), are not.
#[test]
fn a_policy_matches_one_signal_of_the_score() {
    let dir = tempfile::tempdir().expect("temp dir");
    crate::common::certs::make_certificates(dir.path());
    let upstream = Upstream::start();
    let tls_port = crate::common::free_port();
    let server = format!(
        "tls_listen = \"127.0.0.1:{tls_port}\"\ntls_cert_file = \"{}\"\ntls_key_file = \"{}\"\n\
         access_log = true",
        dir.path().join("server.pem").display(),
        dir.path().join("server.key").display()
    );
    let policy = "[[policy]]\nname = \"fake-chrome\"\naction = \"deny\"\n\
                  match = { signals = [\"ua-tls-mismatch\"] }\n";
    let proxy = Proxy::start_with_server(&[&upstream.addr], &server, policy);
    let ca = dir.path().join("ca.pem");
    let url = format!("https://127.0.0.1:{tls_port}/");
    let chrome = format!("User-Agent: {CHROME}");
    let lang = "Accept-Language: en";
    assert_eq!(status_over_tls(&url, &ca, &[&chrome, lang]), "403");
    assert_eq!(status_over_tls(&url, &ca, &[lang]), "200", "curl as itself");
    let plain = proxy.url("/");
    assert_eq!(
        curl(&Curl::get(&plain).agent(CHROME)).status,
        200,
        "missing-browser-headers alone"
    );
    let written = |log: &str| log.contains("signals=missing-browser-headers");
    let log = proxy.log_when(written);
    assert!(log.contains("signals=ua-tls-mismatch"), "{log}");
    assert!(written(&log), "{log}");
}
