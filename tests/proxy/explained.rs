//! Issue 75, "why was I refused?", end to end with the real binary on the memory store: every
//! answer Floodgate makes itself (429, 403, the challenge page, 400, 502) carries its request
//! id, as `ref` in the problem body or as the page's visible reference; and the control API
//! explains the decision behind an id (`GET /v1/decisions/{ref}`), allowed requests too,
//! naming the caller by source and digest, never by the raw value.

use crate::common;

use common::control_api::{admin_tables, call, control, explained, TOKEN};
use common::wait::within;
use common::{header, raw, Proxy, Upstream, PER_USER};
use serde_json::Value;
use std::time::Duration;

const KEY: &str = "raw-api-key-of-alice";

const DENY_ADMIN: &str =
    "[[policy]]\nname = \"no-admin\"\naction = \"deny\"\nmatch = { path_prefix = \"/admin\" }\n";

/// A proxy with the control API on, in front of `upstream`, with `extra` tables.
fn start(upstream: &Upstream, extra: &str) -> (tempfile::TempDir, Proxy) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let admin = admin_tables(dir.path(), "");
    let proxy = Proxy::start_with_tables(&[&upstream.addr], "", &admin, extra);
    (dir, proxy)
}

#[test]
fn a_429_carries_its_ref_and_the_control_api_explains_it() {
    let upstream = Upstream::start();
    let (_dir, proxy) = start(&upstream, PER_USER);
    let mut last = None;
    for _ in 0..6 {
        last = Some(proxy.get("/items/1", &[("x-api-key", KEY)]));
    }
    let refused = last.unwrap();
    assert_eq!(refused.status(), 429);
    let id = header(&refused, "x-request-id");
    assert!(id.len() == 35 && id.starts_with("fg-"), "{id}");
    let body: Value = refused.json().expect("a problem body");
    assert_eq!(body["ref"], id.as_str(), "{body}");
    assert_eq!(body["policy"], "per-user");

    let why = explained(&proxy, &id);
    assert_eq!(why["ref"], id.as_str());
    assert_eq!(why["decision"], "throttled", "{why}");
    assert_eq!(why["status"], 429);
    assert_eq!(why["path"], "/items/1");
    assert_eq!(why["method"], "GET");
    assert_eq!(why["route"], Value::Null, "refused before a pool: {why}");
    assert_eq!(why["found_on"], "this instance");
    assert_eq!(why["policies"][0]["policy"], "per-user", "{why}");
    assert_eq!(why["policies"][0]["outcome"], "throttled");
    assert_eq!(why["policies"].as_array().map(Vec::len), Some(1), "{why}");
    assert!(
        why["policies"][0]["remaining"].as_f64().unwrap() < 1.0,
        "{why}"
    );
    assert_eq!(why["identity"]["source"], "header:x-api-key", "{why}");
    assert_eq!(why["identity"]["digest"].as_str().map(str::len), Some(32));
    assert_eq!(why["bucket"]["capacity"], 5, "{why}");
    assert!(
        why["bucket"]["tokens_after"].as_f64().unwrap() < 1.0,
        "{why}"
    );
    assert!(
        why["bucket"]["retry_after_s"].as_u64().unwrap() >= 1,
        "{why}"
    );
    assert!(why["at_ms"].as_u64().unwrap() > 1_700_000_000_000);
    assert!(!why["instance"].as_str().unwrap().is_empty());
    assert!(
        !why.to_string().contains(KEY),
        "the raw key never leaves: {why}"
    );
}

#[test]
fn an_allowed_request_is_explained_too_and_lookups_are_checked() {
    let upstream = Upstream::start();
    let (_dir, proxy) = start(&upstream, PER_USER);
    let allowed = proxy.get("/ok", &[("x-api-key", KEY)]);
    assert_eq!(allowed.status(), 200);
    let id = header(&allowed, "x-request-id");
    let why = explained(&proxy, &id);
    assert_eq!(why["decision"], "allowed", "{why}");
    assert_eq!(why["status"], 200);
    assert_eq!(why["route"], "default", "{why}");
    assert_eq!(why["bucket"]["tokens_before"], 5.0, "{why}");
    assert_eq!(why["bucket"]["tokens_after"], 4.0, "{why}");
    assert_eq!(why["bucket"]["retry_after_s"], Value::Null);
    assert!(!why.to_string().contains(KEY));
    // Case does not matter; the id is hex.
    let (status, _) = control(
        &proxy,
        "GET",
        &format!("/v1/decisions/{}", id.to_uppercase()),
        None,
    );
    assert_eq!(status, 200);

    let unknown = "0123456789abcdef0123456789abcdef";
    let (status, body) = control(&proxy, "GET", &format!("/v1/decisions/{unknown}"), None);
    assert_eq!((status, &body["field"]), (404, &"ref".into()), "{body}");
    let no_token = call(&proxy, "GET", &format!("/v1/decisions/{id}"), None, None);
    assert_eq!(no_token.status(), 401);
    let wrong = call(
        &proxy,
        "GET",
        &format!("/v1/decisions/{id}"),
        None,
        Some("nope-nope-nope-nope"),
    );
    assert_eq!(wrong.status(), 401);
    for bad in [
        "not-hex-zz",
        "...",
        &"a".repeat(65),
        "abc:def",
        "ab%2fcd",
        "fg-abc",
    ] {
        let (status, body) = control(&proxy, "GET", &format!("/v1/decisions/{bad}"), None);
        assert_eq!(
            (status, &body["field"]),
            (400, &"ref".into()),
            "{bad}: {body}"
        );
    }
    // A client that does not resolve dot segments the way reqwest does.
    for trick in ["..", "%2e%2e"] {
        let head = format!(
            "GET /v1/decisions/{trick} HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer {TOKEN}\r\n\
             Connection: close\r\n\r\n"
        );
        let answer = raw::exchange(proxy.admin_port, &head);
        assert_eq!(raw::status(&answer), 400, "{trick}: {answer}");
        assert!(answer.contains("\"field\":\"ref\""), "{answer}");
    }
    let posted = call(
        &proxy,
        "POST",
        &format!("/v1/decisions/{id}"),
        None,
        Some(TOKEN),
    );
    assert_eq!(posted.status(), 405);
}

/// Issue #82 (3): a client that sent a victim's ref as its own `x-request-id` replaced the
/// victim's decision with its own allowed request.
#[test]
fn a_ref_a_client_sends_never_replaces_the_decision_kept_under_it() {
    let upstream = Upstream::start();
    let (_dir, proxy) = start(&upstream, PER_USER);
    let mut refused = None;
    for _ in 0..6 {
        refused = Some(proxy.get("/victim/path", &[("x-api-key", KEY)]));
    }
    let refused = refused.unwrap();
    assert_eq!(refused.status(), 429);
    let victims = header(&refused, "x-request-id");

    let attack = proxy.get(
        "/innocent/path",
        &[("x-request-id", &victims), ("x-api-key", "attacker")],
    );
    assert_eq!(attack.status(), 200);
    let attackers = header(&attack, "x-request-id");
    assert_ne!(attackers, victims, "a client's id is never the request's");
    // The backend gets Floodgate's id, and the client's apart, as it came.
    assert_eq!(upstream.last_header("x-request-id"), [attackers.as_str()]);
    assert_eq!(
        upstream.last_header("x-client-request-id"),
        [victims.as_str()]
    );
    let why = explained(&proxy, &victims);
    assert_eq!(
        (&why["decision"], &why["path"]),
        (&"throttled".into(), &"/victim/path".into()),
        "the victim's record stands: {why}"
    );
    assert_eq!(explained(&proxy, &attackers)["path"], "/innocent/path");
}

/// Issue #82 (4): 50 ids shared one 16-digit prefix, the rest a permuted counter.
#[test]
fn floodgates_ids_share_no_prefix() {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], "");
    let ids: Vec<String> = (0..50)
        .map(|_| header(&proxy.get("/ok", &[]), "x-request-id"))
        .collect();
    let heads: std::collections::HashSet<&str> = ids.iter().map(|id| &id[..11]).collect();
    assert_eq!(heads.len(), 50, "{ids:?}");
    assert!(ids.iter().all(|id| id.len() == 35 && id.starts_with("fg-")));
}

#[test]
fn a_deny_a_bad_request_and_a_backend_failure_carry_their_ref() {
    let upstream = Upstream::start();
    let (_dir, proxy) = start(&upstream, DENY_ADMIN);
    let denied = proxy.get("/admin/x", &[]);
    assert_eq!(denied.status(), 403);
    let id = header(&denied, "x-request-id");
    let body: Value = denied.json().unwrap();
    assert_eq!(body["ref"], id.as_str(), "{body}");
    let why = explained(&proxy, &id);
    assert_eq!(why["decision"], "denied", "{why}");
    assert_eq!(
        why["policies"][0],
        serde_json::json!({"policy": "no-admin", "outcome": "denied", "remaining": null})
    );

    // A client's own id is not its ref: Floodgate's is.
    let chosen = proxy.get("/admin/y", &[("x-request-id", "client.chosen:1")]);
    let id = header(&chosen, "x-request-id");
    let body: Value = chosen.json().unwrap();
    assert!(
        id.starts_with("fg-") && body["ref"] == id.as_str(),
        "{body}"
    );
    let (status, _) = control(&proxy, "GET", "/v1/decisions/client.chosen:1", None);
    assert_eq!(status, 400);

    // HTTP/1.1 without Host: 400, with its ref.
    let answer = raw::exchange(proxy.port, "GET /a HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert_eq!(raw::status(&answer), 400, "{answer}");
    let id = answer
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("x-request-id: ")
                .map(str::to_owned)
        })
        .expect("the id header");
    let body: Value = serde_json::from_str(answer.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert_eq!(body["ref"], id.trim(), "{answer}");

    // No backend: 502, with its ref.
    let dead = common::free_port();
    let nowhere = Proxy::start(&[&format!("127.0.0.1:{dead}")], "");
    let failed = nowhere.get("/x", &[]);
    assert_eq!(failed.status(), 502);
    let id = header(&failed, "x-request-id");
    let body: Value = failed.json().unwrap();
    assert_eq!(body["ref"], id.as_str(), "{body}");
}

#[test]
fn the_challenge_page_shows_its_reference_and_the_decision_is_explained() {
    let upstream = Upstream::start();
    let policy = "[[policy]]\nname = \"browsers\"\naction = \"challenge\"\n";
    let (_dir, proxy) = start(&upstream, policy);
    let page = proxy.get("/articles", &[("accept", "text/html")]);
    assert_eq!(page.status(), 403);
    let id = header(&page, "x-request-id");
    let text = page.text().unwrap();
    assert!(
        text.contains(&format!("Reference: <code>{id}</code>")),
        "{text}"
    );
    let why = explained(&proxy, &id);
    assert_eq!(why["decision"], "challenged", "{why}");
    assert_eq!(why["policies"][0]["policy"], "browsers");
}

#[test]
fn with_keep_0_nothing_is_kept() {
    let upstream = Upstream::start();
    let (_dir, proxy) = start(&upstream, "[decisions]\nkeep = 0\n");
    let allowed = proxy.get("/ok", &[]);
    let id = header(&allowed, "x-request-id");
    let path = format!("/v1/decisions/{id}");
    let kept = within(Duration::from_millis(300), || {
        control(&proxy, "GET", &path, None).0 != 404
    });
    assert_eq!(kept, None, "nothing is kept");
}

#[test]
fn every_policy_checked_is_explained_in_order() {
    let upstream = Upstream::start();
    let policies = "[identity]\nsources = [\"header:x-api-key\", \"ip\"]\n\n\
                    [[policy]]\nname = \"wide\"\ncapacity = 100\nrate = \"1/m\"\n\n\
                    [[policy]]\nname = \"narrow\"\ncapacity = 1\nrate = \"1/m\"\n";
    let (_dir, proxy) = start(&upstream, policies);
    assert_eq!(proxy.get("/a", &[("x-api-key", KEY)]).status(), 200);
    let refused = proxy.get("/a", &[("x-api-key", KEY)]);
    assert_eq!(refused.status(), 429);
    let why = explained(&proxy, &header(&refused, "x-request-id"));
    let steps: Vec<(&str, &str)> = why["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["policy"].as_str().unwrap(),
                s["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [("wide", "throttled_by_other"), ("narrow", "throttled")],
        "{why}"
    );
    assert_eq!(why["bucket"]["capacity"], 1, "the deciding bucket: {why}");
}
