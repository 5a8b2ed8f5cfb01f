//! The Grafana dashboard (`conf/grafana-dashboard.json`) against a real Prometheus (Debian's
//! `prometheus`) scraping a live Floodgate under traffic: every panel's query parses and
//! returns series. The proxy runs what the dashboard shows: limits, crawler claims, the bot
//! score, a challenge, overload protection (its switch shedding a low request), control API
//! changes (a ban, a refused token). CrowdSec's series need no LAPI: they are exported at zero
//! (`floodgate_blocked_total` by every remedy too), so their panel has series from the start;
//! `tests/outside/crowdsec.rs` moves them with a real LAPI.

use crate::common;

use common::control_api::{admin_tables, call, control};
use common::prometheus::{Answer, Prometheus};
use common::{Proxy, Upstream, LOW_FEEDS};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Every panel's queries, `$instance` read as every instance, named by the panel's title.
fn queries() -> Vec<(String, String)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conf/grafana-dashboard.json");
    let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut queries = Vec::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        let title = panel["title"].as_str().unwrap();
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"].as_str().unwrap();
            queries.push((title.to_owned(), expr.replace("$instance", ".*")));
        }
    }
    queries
}

/// The dashboard covers each part of what ships: a panel names each one's series.
#[test]
fn the_dashboard_has_a_panel_for_each_part_of_floodgate() {
    let exprs: Vec<String> = queries().into_iter().map(|(_, expr)| expr).collect();
    for series in [
        "floodgate_requests_total",
        "floodgate_store_call_seconds_bucket",
        "floodgate_upstream_responses_total",
        "floodgate_bot_requests_total",
        "floodgate_signed_requests_total",
        "floodgate_bot_signals_total",
        "floodgate_challenges_total",
        "floodgate_overload_in_flight",
        "floodgate_overload_shed_total",
        "floodgate_overload_level",
        "floodgate_crowdsec_decisions",
        "floodgate_blocked_total",
        "floodgate_crowdsec_pulls_total",
        "floodgate_admin_attempts_total",
        "floodgate_banned_total",
    ] {
        let named = exprs.iter().any(|e| e.contains(&format!("{series}{{")));
        assert!(named, "no panel shows {series}");
    }
}

const POLICIES: &str = r#"
[[policy]]
name = "pages"
action = "challenge"
match = { path_prefix = "/page" }

[[policy]]
name = "scored"
action = "deny"
match = { min_score = 95 }

[[policy]]
name = "per-address"
capacity = 3
rate = "1/m"
sources = ["ip"]
"#;

/// Requests of every kind the dashboard counts: a low one shed by the switch, a page load
/// challenged, a crawler claim allowed then throttled, a ban made and a token refused.
fn traffic(proxy: &Proxy) {
    let (status, state) = control(
        proxy,
        "PUT",
        "/v1/overload",
        Some(json!({"level": "shed", "ttl": "1m"})),
    );
    assert_eq!(status, 200, "{state}");
    assert_eq!(proxy.get("/feed", &[]).status(), 503, "shed: low priority");
    let page = proxy.get("/page", &[("accept", "text/html")]);
    assert_eq!(page.status(), 403, "the challenge page");
    let googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
    let statuses: Vec<u16> = (0..4)
        .map(|_| {
            proxy
                .get("/", &[("user-agent", googlebot)])
                .status()
                .as_u16()
        })
        .collect();
    assert_eq!(
        statuses,
        [200, 429, 429, 429],
        "the address's third token and on"
    );
    let ban = json!({"scope": "cidr", "value": "192.0.2.0/24", "ttl": "1h"});
    let (status, body) = control(proxy, "POST", "/v1/bans", Some(ban));
    assert!(status == 200 || status == 201, "{status} {body}");
    let refused = call(proxy, "GET", "/v1/bans", None, Some("a-wrong-token-0123"));
    assert_eq!(refused.status(), 401);
}

#[test]
fn every_panel_query_returns_series_from_a_real_prometheus() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let proxy = Proxy::start_with_tables(
        &[&upstream.addr],
        "",
        &admin_tables(dir.path(), ""),
        &format!("{LOW_FEEDS}\n{POLICIES}"),
    );
    let prometheus = Prometheus::start(&format!("127.0.0.1:{}", proxy.admin_port));
    traffic(&proxy);
    let queries = queries();
    let mut missing: Vec<String> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        missing.clear();
        for (title, query) in &queries {
            match prometheus.ask(query) {
                Answer::Series(series) if !series.is_empty() => {}
                Answer::Refused(why) => panic!("{title}: {query} is refused: {why}"),
                other => missing.push(format!("{title}: {query}: {other:?}")),
            }
        }
        if missing.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(missing.is_empty(), "no series:\n{}", missing.join("\n"));
    assert_eq!(prometheus.query("up{job=\"floodgate\"}"), Some(1.0));
    assert_eq!(prometheus.query("count(floodgate_build_info)"), Some(1.0));
}
