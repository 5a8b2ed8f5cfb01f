//! `/robots.txt` answered from Floodgate's copy whatever the gate would say of the request:
//! past a spent limit, to a crawler a deny policy refuses, to an address an operator banned,
//! and while the overload switch challenges everyone (Anubis once challenged robots.txt).

use super::{get, status, CHROME, CURL, DENY_DISALLOWED, GPTBOT, MANAGED};
use crate::common::control_api::{admin_tables, control};
use crate::common::wait::within;
use crate::common::{Proxy, Upstream};
use serde_json::json;
use std::time::Duration;

/// One request an hour per address, every request challenged under overload.
const STRICT: &str = r#"
[[policy]]
name = "once"
capacity = 1
rate = "1/h"

[[policy]]
name = "pages"
on_overload = "challenge"

[overload]
max_in_flight = 8
"#;

/// `/robots.txt` from `address` as `agent`: answered 200 with `file`.
fn served_to(proxy: &Proxy, address: &str, agent: &str, file: &str) {
    let answer = get(proxy, address, "/robots.txt", agent);
    assert_eq!(answer.status(), 200, "{address} as {agent}");
    assert_eq!(answer.text().expect("the file"), file, "{address}");
}

#[test]
fn the_file_is_served_past_limits_denials_bans_and_the_overload_switch() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let config = format!("{MANAGED}{DENY_DISALLOWED}{STRICT}");
    let admin = admin_tables(dir.path(), "");
    let proxy = Proxy::start_with_tables(&[&upstream.addr], "access_log = true", &admin, &config);
    let file = get(&proxy, "127.0.0.1", "/robots.txt", CURL)
        .text()
        .unwrap();
    assert!(file.contains("Disallow: /admin/"), "{file}");

    // Limited: the address's one request is spent.
    assert_eq!(status(&proxy, "127.0.10.1", "/", CHROME), 200);
    assert_eq!(status(&proxy, "127.0.10.1", "/", CHROME), 429);
    served_to(&proxy, "127.0.10.1", CHROME, &file);
    served_to(&proxy, "127.0.10.1", CURL, &file);
    // Denied by a policy: GPTBot may not fetch `/`, but always robots.txt.
    assert_eq!(status(&proxy, "127.0.10.2", "/", GPTBOT), 403);
    served_to(&proxy, "127.0.10.2", GPTBOT, &file);

    // Banned by an operator.
    let ban = json!({"scope": "cidr", "value": "127.0.10.3/32", "reason": "robots test"});
    let (code, made) = control(&proxy, "POST", "/v1/bans", Some(ban));
    assert_eq!(code, 201, "{made}");
    let banned = within(Duration::from_secs(3), || {
        status(&proxy, "127.0.10.3", "/", CHROME) == 403
    });
    assert!(banned.is_some(), "the ban is not enforced");
    served_to(&proxy, "127.0.10.3", CURL, &file);

    // The overload switch at `challenge`: everything else is challenged or shed.
    let switch = json!({"level": "challenge", "ttl": "1m"});
    let (code, state) = control(&proxy, "PUT", "/v1/overload", Some(switch));
    assert_eq!(code, 200, "{state}");
    assert_ne!(status(&proxy, "127.0.10.4", "/", CHROME), 200);
    served_to(&proxy, "127.0.10.4", CHROME, &file);
    served_to(&proxy, "127.0.10.4", CURL, &file);
    let answered = |log: &str| {
        log.lines()
            .filter(|l| l.contains("GET /robots.txt status=200 decision=robots_txt"))
            .count()
    };
    let log = proxy.log_when(|log| answered(log) >= 7);
    assert_eq!(answered(&log), 7, "{log}");
}
