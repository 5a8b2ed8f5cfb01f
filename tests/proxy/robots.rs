//! Crawlers held to robots.txt (issue 84), end to end with the real binary: the managed file as
//! crawlers read it (Python's `urllib.robotparser` and Floodgate's own parser), and a bad
//! `[robots]` refused where it stands at `--test` and on reload. What the file enforces is in
//! `enforced`, what is answered whatever the gate says in `served`, the trap in `trap`, and
//! the backend's file followed in `backend`.

mod backend;
mod enforced;
mod served;
mod trap;

use crate::common::{client_from, floodgate_bin, Proxy, Upstream};
use floodgate::robots::{RobotsTxt, Verdict};
use reqwest::blocking::Response;
use serde_json::Value;
use std::process::Command;

/// OpenAI's crawler, as it names itself.
pub(super) const GPTBOT: &str = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; \
                                 GPTBot/1.2; +https://openai.com/gptbot)";
/// Google's crawler, as it names itself.
pub(super) const GOOGLEBOT: &str =
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
/// A browser: never held to robots.txt.
pub(super) const CHROME: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 \
                                 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36";
/// curl as itself: a catalogue `automation` crawler, held to the `*` group.
pub(super) const CURL: &str = "curl/8.11.1";

/// The trap path the managed files name.
pub(super) const TRAP: &str = "/.well-known/floodgate-trap/";

/// The issue's managed file: no AI training, `/admin/` kept from everyone, a crawl delay of 2 s
/// for the rest, search yes and AI training no as Content Signals, and the trap.
pub(super) const MANAGED: &str = r#"
[robots]
source = "managed"
content_signal = "search=yes, ai-train=no"
groups = { "ai-crawler" = { disallow = ["/"] }, "*" = { disallow = ["/admin/"], crawl_delay = "2s" } }
trap = "/.well-known/floodgate-trap/"
"#;

/// The operator's policy refusing what robots.txt disallows.
pub(super) const DENY_DISALLOWED: &str = r#"
[[policy]]
name = "deny-disallowed"
action = "deny"
match = { robots = "disallowed" }
"#;

/// GET `path` from `address` (a loopback address) as `agent`.
pub(super) fn get(proxy: &Proxy, address: &str, path: &str, agent: &str) -> Response {
    client_from(address)
        .get(proxy.url(path))
        .header("user-agent", agent)
        .send()
        .expect("the proxy answers")
}

/// The status of GET `path` from `address` as `agent`.
pub(super) fn status(proxy: &Proxy, address: &str, path: &str, agent: &str) -> u16 {
    get(proxy, address, path, agent).status().as_u16()
}

/// The access log line of the request answered with `response` (by its request id), once
/// written (as the request ends, just after the answer left).
pub(super) fn logged(proxy: &Proxy, response: &Response) -> String {
    let id = format!("id={} ", crate::common::header(response, "x-request-id"));
    let log = proxy.log_when(|log| log.contains(&id));
    let line = log.lines().find(|l| l.contains(&id)).map(str::to_owned);
    line.unwrap_or_else(|| panic!("no access log line with {id}:\n{log}"))
}

/// `floodgate_robots_requests_total` of `crawler` and `verdict`.
pub(super) fn judged(proxy: &Proxy, crawler: &str, verdict: &str) -> f64 {
    proxy.metric(&format!(
        "floodgate_robots_requests_total{{crawler=\"{crawler}\",verdict=\"{verdict}\"}}"
    ))
}

/// What Python's `urllib.robotparser` makes of the robots.txt `file`: whether GPTBot may fetch
/// `/`, `*` `/admin/x`, Googlebot `/`; `*`'s crawl delay; and the agents (each token the file
/// names, `*` and Googlebot) allowed to fetch below the trap.
const READ_BY_PYTHON: &str = r#"
import json, sys, urllib.robotparser
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
trap = sys.argv[2] + "deeper"
parser = urllib.robotparser.RobotFileParser()
parser.parse(lines)
named = [l.split(":", 1)[1].strip() for l in lines if l.lower().startswith("user-agent:")]
agents = named + ["*", "Googlebot", "SomeNewBot"]
print(json.dumps({
    "gptbot_root": parser.can_fetch("GPTBot", "/"),
    "any_admin": parser.can_fetch("*", "/admin/x"),
    "googlebot_root": parser.can_fetch("Googlebot", "/"),
    "any_delay": parser.crawl_delay("*"),
    "named": len(named),
    "trap_open_to": [a for a in agents if parser.can_fetch(a, trap)],
}))
"#;

/// [`READ_BY_PYTHON`]'s answer for `file`.
fn read_by_python(file: &str) -> Value {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("robots.txt");
    std::fs::write(&path, file).expect("write robots.txt");
    let out = Command::new("python3")
        .args(["-c", READ_BY_PYTHON])
        .arg(&path)
        .arg(TRAP)
        .output()
        .expect("python3 runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    serde_json::from_slice(&out.stdout).expect("the script's JSON")
}

#[test]
fn the_managed_file_reads_as_written_to_python_and_to_floodgates_parser() {
    let upstream = Upstream::start();
    let proxy = Proxy::start_with_server(&[&upstream.addr], "access_log = true", MANAGED);
    let answer = get(&proxy, "127.0.0.1", "/robots.txt?from=test", CURL);
    assert_eq!(answer.status(), 200);
    assert_eq!(
        crate::common::header(&answer, "content-type"),
        "text/plain; charset=utf-8"
    );
    let line = logged(&proxy, &answer);
    let file = answer.text().expect("the file");
    assert!(line.contains("status=200 decision=robots_txt"), "{line}");
    assert_eq!(upstream.served(), 0, "never forwarded");

    let read = read_by_python(&file);
    assert_eq!(read["gptbot_root"], false, "{read}\n{file}");
    assert_eq!(read["any_admin"], false, "{read}");
    assert_eq!(read["googlebot_root"], true, "{read}");
    assert_eq!(read["any_delay"], 2, "{read}");
    assert!(
        read["named"].as_u64() > Some(2),
        "the category expanded: {read}"
    );
    assert_eq!(read["trap_open_to"], Value::Array(Vec::new()), "{read}");
    let signals = file
        .lines()
        .filter(|l| *l == "Content-Signal: search=yes, ai-train=no");
    assert_eq!(signals.count(), 2, "one in each group:\n{file}");

    // Floodgate's own parser agrees (RFC 9309's longest match).
    let txt = RobotsTxt::parse(file.as_bytes());
    let verdict = |token: Option<&str>, path: &str| txt.verdict(token, path);
    assert_eq!(verdict(Some("gptbot"), "/"), Verdict::Disallowed);
    assert_eq!(verdict(Some("google-extended"), "/x"), Verdict::Disallowed);
    assert_eq!(verdict(None, "/admin/x"), Verdict::Disallowed);
    assert_eq!(verdict(None, "/"), Verdict::Allowed);
    assert_eq!(verdict(None, &format!("{TRAP}x")), Verdict::Disallowed);
    assert_eq!(txt.crawl_delay(None).map(|d| d.secs()), Some(2));
}

#[test]
fn a_bad_table_is_located_at_test_and_refused_on_reload() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("bad.toml");
    let cases = [
        (
            "groups = { \"*\" = { disallow = [\"admin/\"] } }",
            "bad.toml:7:32: `robots.groups.\"*\".disallow`: `admin/` does not start with `/`",
        ),
        (
            "groups = { \"*\" = { crawl_delay = \"1500ms\" } }",
            "bad.toml:7:34: `robots.groups.\"*\".crawl_delay` must be a whole number of seconds",
        ),
        (
            "trap = \"/t/\"\ngroups = { GPTBot = { allow = [\"/t/a\"] } }",
            "bad.toml:8:32: `robots.groups.\"GPTBot\".allow`: `/t/a` lets crawlers fetch the trap",
        ),
    ];
    for (table, message) in cases {
        let text = format!(
            "[server]\nlisten = \"127.0.0.1:8080\"\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n\
             [robots]\nsource = \"managed\"\n{table}\n"
        );
        std::fs::write(&config, text).expect("write the config");
        let out = Command::new(floodgate_bin())
            .arg("--config")
            .arg(&config)
            .arg("--test")
            .output()
            .expect("floodgate runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{table}");
        assert!(stderr.contains(message), "{table}:\n{stderr}");
    }

    // On reload: refused, located, and the file served is still the last good one's.
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], MANAGED);
    proxy
        .rewrite_config(|text| text.replace("disallow = [\"/admin/\"]", "disallow = [\"admin/\"]"));
    proxy.reload("failure");
    let text = std::fs::read_to_string(&proxy.config_path).expect("the config");
    let (row, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("\"admin/\""))
        .expect("the bad line");
    let column = line.find("\"admin/\"").unwrap_or_default() + 1;
    let located = format!(
        "{}:{}:{column}: `robots.groups.\"*\".disallow`: `admin/` does not start with `/`",
        proxy.config_path.display(),
        row + 1
    );
    let log = proxy.log();
    assert!(log.contains(&located), "{located}\n{log}");
    let file = get(&proxy, "127.0.0.1", "/robots.txt", CURL)
        .text()
        .unwrap();
    assert!(file.contains("Disallow: /admin/"), "{file}");
}
