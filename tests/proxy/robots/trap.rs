//! The trap on the memory store, at its default (random) path: a caller that read robots.txt
//! and then asks for the trap with a non-browser User-Agent is banned (403, `decision=trapped`,
//! a `ref`), its address refused everything but robots.txt; a browser, an address that never
//! read the file, and a path beside the trap are let go.

use super::{get, status, CHROME, CURL};
use crate::common::{Proxy, Upstream};

/// `[robots]` with its defaults but a managed file: `User-agent: *` and the trap.
const DEFAULTS: &str = "[robots]\nsource = \"managed\"\n";

/// `floodgate_robots_trap_total` of `result`.
fn sprung(proxy: &Proxy, result: &str) -> f64 {
    proxy.metric(&format!(
        "floodgate_robots_trap_total{{result=\"{result}\"}}"
    ))
}

/// The trap path the served file disallows (the only rule of its `*` group).
fn trap_of(file: &str) -> String {
    let rules: Vec<&str> = file
        .lines()
        .filter_map(|l| l.strip_prefix("Disallow: "))
        .collect();
    assert_eq!(rules.len(), 1, "{file}");
    assert!(
        rules[0].starts_with("/.well-known/floodgate-trap/"),
        "{file}"
    );
    rules[0].to_owned()
}

#[test]
fn a_crawler_that_read_the_file_and_asks_for_the_trap_is_banned() {
    let upstream = Upstream::start();
    let proxy = Proxy::start_with_server(&[&upstream.addr], "access_log = true", DEFAULTS);
    let file = get(&proxy, "127.0.11.1", "/robots.txt", CURL)
        .text()
        .unwrap();
    let trap = trap_of(&file);

    let caught = get(&proxy, "127.0.11.1", &format!("{trap}page"), CURL);
    assert_eq!(caught.status(), 403);
    let id = crate::common::header(&caught, "x-request-id");
    let body: serde_json::Value = caught.json().expect("a problem");
    assert_eq!(body["ref"], id.as_str(), "{body}");
    assert_eq!(sprung(&proxy, "banned"), 1.0);
    // The address is banned, whatever it sends next; robots.txt is still served to it.
    assert_eq!(status(&proxy, "127.0.11.1", "/", CURL), 403);
    assert_eq!(status(&proxy, "127.0.11.1", "/", CHROME), 403);
    let again = get(&proxy, "127.0.11.1", "/robots.txt", CURL);
    assert_eq!(again.status(), 200);
    assert_eq!(again.text().unwrap(), file);
    let log = proxy.log();
    let trapped = log
        .lines()
        .filter(|l| l.contains("status=403 decision=trapped"));
    assert_eq!(trapped.count(), 3, "{log}");
    assert_eq!(upstream.served(), 0);

    // A browser made to fetch it (an `<img>` elsewhere): 404, not banned.
    assert_eq!(status(&proxy, "127.0.11.2", "/robots.txt", CHROME), 200);
    assert_eq!(status(&proxy, "127.0.11.2", &trap, CHROME), 404);
    assert_eq!(status(&proxy, "127.0.11.2", "/", CHROME), 200);
    // An address that never read the file: 404, not banned.
    assert_eq!(status(&proxy, "127.0.11.3", &trap, CURL), 404);
    assert_eq!(status(&proxy, "127.0.11.3", "/", CHROME), 200);
    assert_eq!(sprung(&proxy, "spared"), 2.0);
    assert_eq!(sprung(&proxy, "banned"), 1.0);
    assert_eq!(upstream.served(), 2, "the trap is never forwarded");
}

#[test]
fn a_path_the_file_lets_crawlers_fetch_never_springs_the_trap() {
    let upstream = Upstream::start();
    let config = "[robots]\nsource = \"managed\"\ntrap = \"/.well-known/floodgate-trap/\"\n";
    let proxy = Proxy::start(&[&upstream.addr], config);
    assert_eq!(status(&proxy, "127.0.11.4", "/robots.txt", CURL), 200);
    // `Disallow: /.well-known/floodgate-trap/` does not cover the path without its slash,
    // nor one that merely begins like it: a crawler obeying the file may fetch them.
    for path in [
        "/.well-known/floodgate-trap",
        "/.well-known/floodgate-trapdoor",
    ] {
        assert_eq!(status(&proxy, "127.0.11.4", path, CURL), 200, "{path}");
    }
    assert_eq!(sprung(&proxy, "banned"), 0.0);
    assert_eq!(status(&proxy, "127.0.11.4", "/", CURL), 200);
}
