//! Issue #63 ("What hostile probes got through"), probes 3, 4, 6, 7 and 10 re-run against the
//! real binary with real clients, each with its new answer.

use super::common::{self, client_from, floodgate_bin, Proxy, Upstream};
use super::{admin_tables, call, control, status_from, POLICY, TOKEN};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A proxy with the control API on, `admin_more` added to its `[admin]` table.
fn proxy(upstream: &Upstream, dir: &std::path::Path, admin_more: &str) -> Proxy {
    Proxy::start_with_tables(
        &[&upstream.addr],
        "",
        &admin_tables(dir, admin_more),
        POLICY,
    )
}

/// Probe 4: an IPv4-mapped IPv6 ban is stored, shown and matched as the IPv4 network.
#[test]
fn an_ipv4_mapped_ban_is_the_ipv4_network_and_matches_it() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let proxy = proxy(&upstream, dir.path(), "");
    let ban = json!({"scope": "cidr", "value": "::ffff:127.0.0.2/128"});
    let (status, made) = control(&proxy, "POST", "/v1/bans", Some(ban));
    assert_eq!(
        (status, &made["value"]),
        (201, &json!("127.0.0.2/32")),
        "{made}"
    );
    assert_eq!(status_from(&proxy, "127.0.0.2", None), 403);
    assert_eq!(status_from(&proxy, "127.0.0.1", None), 200);
    let (_, listed) = control(&proxy, "GET", "/v1/bans", None);
    assert_eq!(listed["bans"][0]["value"], "127.0.0.2/32", "{listed}");

    let wide = json!({"scope": "cidr", "value": "::ffff:127.0.0.0/104", "ttl": "1s"});
    let (status, made) = control(&proxy, "POST", "/v1/bans", Some(wide));
    assert_eq!(
        (status, &made["value"]),
        (201, &json!("127.0.0.0/8")),
        "{made}"
    );
    assert_eq!(
        status_from(&proxy, "127.0.0.1", None),
        403,
        "the /104 matches 127/8"
    );
}

/// Probe 6: host bits, everyone and a ttl of a nanosecond are refused, naming what is meant.
#[test]
fn footguns_are_refused_and_everyone_needs_force() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let proxy = proxy(&upstream, dir.path(), "");
    let (status, problem) = control(
        &proxy,
        "POST",
        "/v1/bans",
        Some(json!({"scope": "cidr", "value": "10.0.0.1/8"})),
    );
    assert_eq!((status, &problem["field"]), (400, &json!("value")));
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("write 10.0.0.0/8"),
        "{problem}"
    );
    for everyone in ["0.0.0.0/0", "::/0"] {
        let body = json!({"scope": "cidr", "value": everyone});
        let (status, problem) = control(&proxy, "POST", "/v1/bans", Some(body));
        assert_eq!(
            (status, &problem["field"]),
            (400, &json!("value")),
            "{everyone}"
        );
        assert!(problem["detail"]
            .as_str()
            .unwrap()
            .contains("\"force\": true"));
    }
    let tiny = json!({"scope": "cidr", "value": "10.0.0.0/8", "ttl": "1ns"});
    let (status, problem) = control(&proxy, "POST", "/v1/bans", Some(tiny));
    assert_eq!((status, &problem["field"]), (400, &json!("ttl")));
    assert_eq!(
        status_from(&proxy, "127.0.0.1", None),
        200,
        "nothing was banned"
    );
    let (_, listed) = control(&proxy, "GET", "/v1/bans", None);
    assert_eq!(listed["bans"], json!([]));

    let forced = json!({"scope": "cidr", "value": "0.0.0.0/0", "force": true});
    let (status, made) = control(&proxy, "POST", "/v1/bans", Some(forced));
    assert_eq!((status, &made["value"]), (201, &json!("0.0.0.0/0")));
    assert_eq!(status_from(&proxy, "127.0.0.1", None), 403);
}

/// Probe 7: a newline or an escape in `reason` is written escaped, on the change's one line.
#[test]
fn a_reason_cannot_forge_a_log_line() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let proxy = proxy(&upstream, dir.path(), "");
    let forged =
        "spam\n[2026-01-01T00:00:00Z INFO  floodgate] control API: root unban ban 1\u{1b}[2K";
    let body = json!({"scope": "cidr", "value": "203.0.113.0/24", "reason": forged});
    assert_eq!(control(&proxy, "POST", "/v1/bans", Some(body)).0, 201);
    let log = proxy.log();
    let line = log
        .lines()
        .find(|l| l.contains("control API: ops ban cidr 203.0.113.0/24"))
        .expect("the change is logged");
    assert!(line.ends_with("(spam\\n[2026-01-01T00:00:00Z INFO  floodgate] control API: root unban ban 1\\u001b[2K): created"), "{line}");
    assert!(!log.lines().any(|l| l.starts_with("[2026-01-01")), "{log}");
    assert!(!log.contains('\u{1b}'));
}

/// Probe 10: a value of the wrong JSON type names its field.
#[test]
fn a_wrong_json_type_names_its_field() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let proxy = proxy(&upstream, dir.path(), "");
    let cases = [
        (
            "/v1/bans",
            json!({"scope": "cidr", "value": "10.0.0.0/8", "ttl": 3600}),
            "ttl",
        ),
        (
            "/v1/bans",
            json!({"scope": ["cidr"], "value": "10.0.0.0/8"}),
            "scope",
        ),
        ("/v1/bans", json!({"scope": "cidr", "value": 7}), "value"),
        (
            "/v1/bans",
            json!({"scope": "cidr", "value": "10.0.0.0/8", "reason": false}),
            "reason",
        ),
        (
            "/v1/overrides",
            json!({"policy": "per-user", "source": "ip", "value": "127.0.0.1", "capacity": 5, "rate": 1}),
            "rate",
        ),
        (
            "/v1/callers/reset",
            json!({"source": 1, "value": "x"}),
            "source",
        ),
    ];
    for (path, body, field) in cases {
        let (status, problem) = control(&proxy, "POST", path, Some(body.clone()));
        assert_eq!(
            (status, &problem["field"]),
            (400, &json!(field)),
            "{body}: {problem}"
        );
    }
}

/// Probe 10: failed tokens are slowed per address after 20, counted, and other addresses
/// are not slowed.
#[test]
fn failed_tokens_are_slowed_per_address() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let proxy = proxy(&upstream, dir.path(), "");
    let wrong = "wrong-0123456789abcdef";
    let statuses: Vec<u16> = (0..40)
        .map(|_| {
            call(&proxy, "GET", "/v1/bans", None, Some(wrong))
                .status()
                .as_u16()
        })
        .collect();
    assert!(statuses[..20].iter().all(|s| *s == 401), "{statuses:?}");
    assert!(statuses[20..].contains(&429), "{statuses:?}");
    let slowed = call(&proxy, "GET", "/v1/bans", None, Some(wrong));
    if slowed.status() == 429 {
        assert!(slowed.headers().contains_key("retry-after"));
    }
    // Hammering for a second: about ten tries get through, not thousands.
    let started = Instant::now();
    let mut tried = 0;
    while started.elapsed() < Duration::from_secs(1) {
        tried += u32::from(call(&proxy, "GET", "/v1/bans", None, Some(wrong)).status() == 401);
    }
    assert!(tried <= 12, "{tried} tries in a second");
    assert!(proxy.metric("floodgate_admin_auth_slowed_total") > 0.0);
    let other = client_from("127.0.0.2")
        .get(format!("http://127.0.0.1:{}/v1/bans", proxy.admin_port))
        .bearer_auth(TOKEN)
        .send()
        .unwrap();
    assert_eq!(other.status(), 200, "another address is not slowed");
}

/// Probe 3: with `protect_metrics`, `/metrics` and `/offenders` need a token; health stays
/// open.
#[test]
fn protected_views_need_a_token() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let proxy = proxy(&upstream, dir.path(), "protect_metrics = true\n");
    for path in ["/metrics", "/offenders"] {
        assert_eq!(
            call(&proxy, "GET", path, None, None).status(),
            401,
            "{path}"
        );
        assert_eq!(
            call(&proxy, "GET", path, None, Some("wrong-0123456789abcdef")).status(),
            401
        );
        assert_eq!(
            call(&proxy, "GET", path, None, Some(TOKEN)).status(),
            200,
            "{path}"
        );
    }
    assert_eq!(call(&proxy, "GET", "/healthz", None, None).status(), 200);
    assert_eq!(call(&proxy, "GET", "/readyz", None, None).status(), 200);
    let metrics = call(&proxy, "GET", "/metrics", None, Some(TOKEN))
        .text()
        .unwrap();
    assert!(
        metrics.contains("floodgate_admin_unauthorized_total 4"),
        "{metrics}"
    );
}

/// Probe 3: a state file its group or everyone may read stops the start, naming the fix.
#[test]
fn a_world_readable_state_file_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("control.json");
    std::fs::write(&state, r#"{"next_id":1,"bans":[],"overrides":[]}"#).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o644)).unwrap();
    let config = dir.path().join("floodgate.toml");
    let (port, admin) = (common::free_port(), common::free_port());
    std::fs::write(
        &config,
        format!(
            "[server]\nlisten = \"127.0.0.1:{port}\"\n\n[admin]\nlisten = \"127.0.0.1:{admin}\"\n\
             state_file = \"{}\"\n\n[upstream]\nbackends = [\"127.0.0.1:9\"]\n",
            state.display()
        ),
    )
    .unwrap();
    let out = Command::new(floodgate_bin())
        .arg("--config")
        .arg(&config)
        .stdout(Stdio::null())
        .output()
        .expect("run floodgate");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("chmod 600 {}", state.display())),
        "{stderr}"
    );
}
