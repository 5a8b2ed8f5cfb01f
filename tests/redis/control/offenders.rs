//! An offender's row names the source that identified the caller, not the first of its
//! policy's chain (`pass` for a caller named by its address under `["pass", "ip"]`), so a ban
//! or override made from the row (as the console makes them) bites on the next request.

use super::common;
use common::control_api::{admin_tables, control};
use common::wait::within;
use common::{client_from, Proxy, Upstream};
use serde_json::{json, Value};
use std::time::Duration;

/// Callers by API key, else by User-Agent, else by address; two requests a minute each.
const BY_KEY_AGENT_OR_ADDRESS: &str = r#"
[identity]
sources = ["header:x-api-key", "header:user-agent", "ip"]

[[policy]]
name = "per-caller"
capacity = 2
rate = "1/m"
"#;

/// The status of `GET /x` from `address`, with `agent` as User-Agent if given (the client
/// sends none otherwise).
fn status(proxy: &Proxy, address: &str, agent: Option<&str>) -> u16 {
    let mut req = client_from(address).get(proxy.url("/x"));
    if let Some(agent) = agent {
        req = req.header("user-agent", agent);
    }
    req.send().expect("the proxy answers").status().as_u16()
}

/// The `/offenders` row of the caller whose digest `/v1/callers` gives `source` and `value`.
fn row_of(proxy: &Proxy, source: &str, value: &str) -> Value {
    let path = format!("/v1/callers?source={source}&value={value}");
    let (_, inspected) = control(proxy, "GET", &path, None);
    let digest = inspected["policies"][0]["caller"].clone();
    let offenders: Value = proxy.admin("/offenders").unwrap().json().unwrap();
    let rows = offenders["offenders"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let row = rows.into_iter().find(|r| r["caller"] == digest);
    row.unwrap_or_else(|| panic!("no row for {source} {value}: {offenders}"))
}

/// The row's caller as the console names it: its source and digest.
fn named(row: &Value, more: Value) -> Value {
    let mut body = json!({"source": row["source"], "caller": row["caller"]});
    body.as_object_mut()
        .unwrap()
        .extend(more.as_object().unwrap().clone());
    body
}

#[test]
fn an_offenders_row_names_the_source_that_identified_it_and_its_ban_and_override_bite() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let admin = admin_tables(dir.path(), "");
    let proxy = Proxy::start_with_tables(&[&upstream.addr], "", &admin, BY_KEY_AGENT_OR_ADDRESS);
    const AGENT: &str = "Scraper/1.0";
    for _ in 0..4 {
        status(&proxy, "127.0.0.1", Some(AGENT));
        status(&proxy, "127.0.0.3", None);
    }
    assert_eq!(status(&proxy, "127.0.0.1", Some(AGENT)), 429);
    assert_eq!(status(&proxy, "127.0.0.3", None), 429);

    let by_agent = row_of(&proxy, "header:user-agent", AGENT);
    assert_eq!(by_agent["source"], "header:user-agent", "{by_agent}");
    let by_address = row_of(&proxy, "ip", "127.0.0.3");
    assert_eq!(by_address["source"], "ip", "{by_address}");

    let ban = named(&by_agent, json!({"scope": "caller", "ttl": "1h"}));
    assert_eq!(control(&proxy, "POST", "/v1/bans", Some(ban)).0, 201);
    let banned = || status(&proxy, "127.0.0.1", Some(AGENT)) == 403;
    assert!(within(Duration::from_secs(2), banned).is_some());

    let more = json!({"policy": "per-caller", "capacity": 50, "rate": "1/s", "ttl": "1h"});
    let raise = named(&by_address, more);
    assert_eq!(control(&proxy, "POST", "/v1/overrides", Some(raise)).0, 201);
    let let_through = || status(&proxy, "127.0.0.3", None) == 200;
    assert!(within(Duration::from_secs(2), let_through).is_some());
}

#[test]
fn under_pass_then_ip_a_caller_without_a_pass_is_listed_and_banned_by_its_address() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let admin = admin_tables(dir.path(), "");
    let chain = BY_KEY_AGENT_OR_ADDRESS.replace(
        r#"["header:x-api-key", "header:user-agent", "ip"]"#,
        r#"["pass", "ip"]"#,
    );
    assert!(
        chain.contains(r#"["pass", "ip"]"#),
        "what challenge.md recommends"
    );
    let proxy = Proxy::start_with_tables(&[&upstream.addr], "", &admin, &chain);
    for _ in 0..3 {
        status(&proxy, "127.0.0.4", None);
    }
    let row = row_of(&proxy, "ip", "127.0.0.4");
    assert_eq!(row["source"], "ip", "{row}");
    let ban = named(&row, json!({"scope": "caller", "ttl": "1h"}));
    assert_eq!(control(&proxy, "POST", "/v1/bans", Some(ban)).0, 201);
    let banned = || status(&proxy, "127.0.0.4", None) == 403;
    assert!(within(Duration::from_secs(2), banned).is_some());
}
