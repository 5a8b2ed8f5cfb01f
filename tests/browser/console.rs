//! The operators' console (issue 60) in a real browser (headless Chromium, `common::browser`)
//! against the real binary: three instances on one Redis sharing a token file, traffic running.
//! The figures move; a flooding caller shows among the offenders within 3 s; a ban made from the
//! page refuses it on all three instances within 1 s; an override made from the page admits its
//! capacity; deleting the ban from the page serves it again. A `<script>` value (10,000
//! characters long) shows as text, cut; a wrong token says so and signs nobody in; a ban another
//! operator deleted says it is gone; a restart under the page is told and the page reconnects.
//! Every request goes to the admin listener, and the console logs no error.
//!
//! `FLOODGATE_CONSOLE_SHOTS=1` saves the screenshots at 1280 and 390 px into
//! `docs/src/images/` (the book's), else into a temporary directory.

use crate::common;
use common::PER_USER as POLICY;

use common::browser::{Plan, Report};
use common::control_api::{admin_tables, control, TOKEN};
use common::redis::RedisServer;
use common::wait::eventually;
use common::{client_from, floodgate_bin, Proxy, Upstream};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const FLOODER: &str = "flooder-key";

fn status_of(proxy: &Proxy, key: &str) -> u16 {
    proxy.get("/x", &[("x-api-key", key)]).status().as_u16()
}

fn console_url(proxy: &Proxy) -> String {
    format!("http://127.0.0.1:{}/console", proxy.admin_port)
}

/// Reads the chart's pixels (as a data URL).
const CHART: &str = "arguments[arguments.length - 1](document.getElementById('chart').toDataURL())";

/// A plan that opens the console of `proxy` and signs in.
fn signed_in(proxy: &Proxy) -> Plan {
    Plan::new()
        .visit(console_url(proxy))
        .until_text("Live")
        .type_text("[data-test=token]", TOKEN)
        .click("[data-test=sign-in]")
        .wait_for("[data-test=sign-out]")
}

/// Where the screenshots go.
fn shots_dir() -> PathBuf {
    match std::env::var("FLOODGATE_CONSOLE_SHOTS").as_deref() {
        Ok("1") => Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/images"),
        _ => std::env::temp_dir(),
    }
}

/// Every step did what it says; every request went to `admin`; no console error.
fn clean(report: &Report, admin: u16) {
    for (i, step) in report.steps.iter().enumerate() {
        assert!(step.ok, "step {i} failed: {step:?}");
    }
    let origin = format!("http://127.0.0.1:{admin}/");
    let elsewhere: Vec<&String> = report
        .requests
        .iter()
        .filter(|u| !u.starts_with(&origin))
        .collect();
    assert!(elsewhere.is_empty(), "requests elsewhere: {elsewhere:?}");
    assert!(report.console.is_empty(), "console: {:?}", report.console);
}

/// Sends the flooder's requests to the proxies in turn until stopped.
fn flood(proxies: Arc<Vec<Proxy>>, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut i = 0;
        while !stop.load(Ordering::Relaxed) {
            let proxy = &proxies[i % proxies.len()];
            let _ = proxy.get("/x", &[("x-api-key", FLOODER)]);
            let _ = proxy.get("/x", &[("x-api-key", &format!("steady-{i}"))]);
            i += 1;
            std::thread::sleep(Duration::from_millis(10));
        }
    })
}

/// From the moment a ban of `digest` shows in the list, how long until every proxy refuses
/// the flooder (`None`: not within 5 s of the watch starting after 60 s).
fn watch_ban(
    proxies: Arc<Vec<Proxy>>,
    digest: String,
) -> std::thread::JoinHandle<Option<Duration>> {
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(60);
        let made = loop {
            let (_, bans) = control(&proxies[0], "GET", "/v1/bans", None);
            let listed = bans["bans"].as_array().cloned().unwrap_or_default();
            if listed.iter().any(|b| b["caller"] == digest.as_str()) {
                break Instant::now();
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        while made.elapsed() < Duration::from_secs(5) {
            if proxies.iter().all(|p| status_of(p, FLOODER) == 403) {
                return Some(made.elapsed());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    })
}

#[test]
fn three_instances_one_console_the_flooder_banned_overridden_and_served_again() {
    let upstream = Upstream::start();
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "[store]\nkind = \"redis\"\nurl = \"{}\"\n{POLICY}",
        redis.url()
    );
    let proxies: Arc<Vec<Proxy>> = Arc::new(
        (0..3)
            .map(|_| {
                Proxy::start_with_tables(
                    &[&upstream.addr],
                    "",
                    &admin_tables(dir.path(), ""),
                    &config,
                )
            })
            .collect(),
    );
    let by_value = format!("/v1/callers?source=header:x-api-key&value={FLOODER}");
    let digest = control(&proxies[0], "GET", &by_value, None).1["policies"][0]["caller"]
        .as_str()
        .unwrap()
        .to_owned();
    let stop = Arc::new(AtomicBool::new(false));
    let traffic = flood(proxies.clone(), stop.clone());
    let watch = watch_ban(proxies.clone(), digest.clone());

    let row = format!("[data-test=offender][data-caller=\"{digest}\"]");
    let shots = shots_dir();
    let plan = signed_in(&proxies[0])
        .window(1280, 1000)
        .wait_for(&row)
        .step_timeout(Duration::from_secs(3))
        .read("[data-test=throttled-rate]")
        .read("[data-test=allowed-rate]")
        .wait_for_text("#scope", "fleet-wide: 3")
        .step_timeout(Duration::from_secs(5))
        .pause(Duration::from_secs(2))
        .read("[data-test=throttled-rate]")
        .screenshot(shots.join("console-1280.png"))
        .click(&format!("{row} [data-test=ban]"))
        .type_text("[data-test=ban-ttl]", "10m")
        .click("[data-test=ban-confirm]")
        .wait_for("[data-test=ban-row]")
        .read_all("[data-test=ban-row]", "data-id")
        .window(390, 1600)
        .pause(Duration::from_millis(1500))
        .screenshot(shots.join("console-390.png"))
        .script(CHART)
        .pause(Duration::from_millis(2500))
        .script(CHART);
    let report = plan.run();
    let last = report.steps.len() - 1;
    let drawn = |i: usize| report.steps[i].value.clone().unwrap();
    assert_ne!(
        drawn(last),
        drawn(last - 2),
        "the chart moves while traffic runs"
    );
    clean(&report, proxies[0].admin_port);
    let took = watch
        .join()
        .unwrap()
        .expect("every instance refuses the banned caller");
    eprintln!("the ban applied on all three instances in {took:?}");
    assert!(
        took <= Duration::from_secs(1),
        "the ban applied everywhere in {took:?}"
    );
    let number = |i: usize| -> u64 {
        let value = report.steps[i].value.as_deref().unwrap_or("");
        value
            .parse()
            .unwrap_or_else(|_| panic!("step {i} read {value:?}"))
    };
    // Steps: 0 visit, 1 type, 2 click, 3 signed in, 4 window, 5 offender, 6 throttled,
    // 7 allowed, 8 scope, 9 pause, 10 throttled again, 11 screenshot, 12-15 the ban, 16 its id.
    assert!(
        number(6) > 0 || number(10) > 0,
        "the throttled figure moves"
    );
    assert!(number(7) > 0, "the allowed figure moves");
    let ids = report.steps[16].values.clone().unwrap();
    let id = ids[0].clone().unwrap();

    // The override, then the unban, from the page; the flooder is served at the new size.
    let plan = signed_in(&proxies[1])
        .wait_for(&row)
        .click(&format!("{row} [data-test=override]"))
        .type_text("[data-test=override-capacity]", "60")
        .type_text("[data-test=override-rate]", "1/s")
        .type_text("[data-test=override-ttl]", "10m")
        .click("[data-test=override-confirm]")
        .wait_for("[data-test=override-row]")
        .click(&format!(
            "[data-test=ban-row][data-id=\"{id}\"] [data-test=unban]"
        ))
        .wait_gone(&format!("[data-test=ban-row][data-id=\"{id}\"]"));
    stop.store(true, Ordering::Relaxed);
    traffic.join().unwrap();
    let report = plan.run();
    clean(&report, proxies[1].admin_port);
    let started = Instant::now();
    while proxies.iter().any(|p| status_of(p, FLOODER) == 403) {
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "the unban applies"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let served = (0..30)
        .filter(|i| status_of(&proxies[i % 3], FLOODER) == 200)
        .count();
    assert!(
        served >= 25,
        "the override admits its capacity: {served} of 30 served"
    );
}

#[test]
fn bad_input_is_shown_as_text_a_wrong_token_signs_nobody_in_and_a_gone_ban_says_so() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let proxy =
        Proxy::start_with_tables(&[&upstream.addr], "", &admin_tables(dir.path(), ""), POLICY);
    let reason = format!("<script>alert(\"x\")</script> 'quoted' {}", "A".repeat(900));
    let (status, _) = control(
        &proxy,
        "POST",
        "/v1/bans",
        Some(json!({"scope": "cidr", "value": "192.0.2.0/24", "reason": reason})),
    );
    assert_eq!(status, 201);
    let (status, gone) = control(
        &proxy,
        "POST",
        "/v1/bans",
        Some(json!({"scope": "cidr", "value": "198.51.100.0/24"})),
    );
    assert_eq!(status, 201);
    let gone = gone["id"].as_u64().unwrap();

    let wrong = Plan::new()
        .visit(console_url(&proxy))
        .until_text("Live")
        .type_text("[data-test=token]", "not-the-token-0123456789")
        .click("[data-test=sign-in]")
        .wait_for_text("[data-test=error]", "refused")
        .read("[data-test=error]")
        .read_all("[data-test=ban-row]", "data-id")
        .wait_for("[data-test=sign-in]")
        .run();
    assert!(wrong.steps.iter().all(|s| s.ok), "{:?}", wrong.steps);
    assert!(wrong.steps[4]
        .value
        .as_deref()
        .unwrap()
        .contains("admin.token_file"));
    assert_eq!(
        wrong.steps[5].values,
        Some(vec![]),
        "nothing shown signed out"
    );

    // Another operator deletes the ban; at once (before the page reads the list again) this
    // one clicks its unban.
    let delete = format!(
        "const done = arguments[arguments.length - 1];\
         fetch('/v1/bans/{gone}', {{method: 'DELETE', headers: {{Authorization: 'Bearer {TOKEN}'}}}})\
         .then(r => {{\
           const unban = document.querySelector('[data-test=ban-row][data-id=\"{gone}\"] [data-test=unban]');\
           if (unban) unban.click();\
           done(r.status + (unban ? ' clicked' : ' gone already'));\
         }});"
    );
    let report = signed_in(&proxy)
        .wait_for_text(
            "[data-test=ban-row]",
            "<script>alert(\"x\")</script> 'quoted' AAA",
        )
        .read("[data-test=ban-row]")
        .wait_for(&format!("[data-test=ban-row][data-id=\"{gone}\"]"))
        .script(&delete)
        .wait_for_text("[data-test=error]", "is gone")
        .run();
    assert!(report.steps.iter().all(|s| s.ok), "{:?}", report.steps);
    let row = report.steps[5].value.clone().unwrap();
    assert!(row.contains("AAAA…"), "cut: {row}");
    assert!(row.chars().count() < 200, "cut: {row}");
    assert_eq!(
        report.steps[7].value.as_deref(),
        Some("\"204 clicked\""),
        "the other operator, then this one"
    );
    let scripts: Vec<_> = report
        .console
        .iter()
        .filter(|c| c.source != "network")
        .collect();
    assert!(scripts.is_empty(), "console: {scripts:?}");
}

#[test]
fn bans_are_read_a_page_at_a_time_and_protected_views_need_the_token() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let admin = format!("{}protect_metrics = true\n", admin_tables(dir.path(), ""));
    let proxy = Proxy::start_with_tables(&[&upstream.addr], "", &admin, POLICY);
    let ids: Vec<u64> = (0..450)
        .map(|i| {
            let body =
                json!({"scope": "cidr", "value": format!("10.{}.{}.0/24", i / 256, i % 256)});
            let (status, made) = control(&proxy, "POST", "/v1/bans", Some(body));
            assert_eq!(status, 201);
            made["id"].as_u64().unwrap()
        })
        .collect();
    let admin_url = |path: &str| format!("http://127.0.0.1:{}{path}", proxy.admin_port);
    let client = client_from("127.0.0.1");
    let get = |path: &str, token: bool| {
        let req = client.get(admin_url(path));
        let req = if token { req.bearer_auth(TOKEN) } else { req };
        req.send().unwrap().status().as_u16()
    };
    assert_eq!(get("/console", false), 200, "the page holds no data");
    assert_eq!(get("/console/api/rates", false), 401);
    assert_eq!(get("/console/api/status", false), 401);
    assert_eq!(get("/console/api/rates", true), 200);

    let row = |id: u64| format!("[data-test=ban-row][data-id=\"{id}\"]");
    let report = signed_in(&proxy)
        .wait_for(&row(ids[199]))
        .read_all("[data-test=ban-row]", "data-id")
        .click("[data-test=bans-more]")
        .wait_for(&row(ids[399]))
        .read_all("[data-test=ban-row]", "data-id")
        .wait_for_text("#offenders-empty", "No caller")
        .run();
    assert!(report.steps.iter().all(|s| s.ok), "{:?}", report.steps);
    // Before signing in, the protected views answered 401 (the page then asks for a token).
    let other: Vec<_> = report
        .console
        .iter()
        .filter(|c| !(c.source == "network" && c.message.contains("401")))
        .collect();
    assert!(other.is_empty(), "console: {other:?}");
    assert_eq!(report.steps[5].values.as_ref().unwrap().len(), 200);
    assert_eq!(report.steps[8].values.as_ref().unwrap().len(), 400);
}

#[test]
fn a_restart_under_the_page_is_told_and_the_page_reconnects() {
    let upstream = Upstream::start();
    let mut proxy = Proxy::start(&[&upstream.addr], POLICY);
    let config = proxy.config_path.clone();
    let admin = proxy.admin_port;
    // The page is up when its screenshot is written: then the proxy goes away. It comes back
    // once the page has told the loss (a second screenshot).
    let marker = tempfile::tempdir().unwrap();
    let up = marker.path().join("up.png");
    let lost = marker.path().join("lost.png");
    let plan = Plan::new()
        .visit(console_url(&proxy))
        .until_text("Live")
        .wait_for("[data-test=read-only]")
        .wait_gone("[data-test=sign-in]")
        .screenshot(&up)
        .wait_for_text("[data-test=error]", "Lost the connection")
        .step_timeout(Duration::from_secs(30))
        .screenshot(&lost)
        .wait_for_text("[data-test=status]", "Reconnected")
        .step_timeout(Duration::from_secs(30))
        .wait_gone("[data-test=error]");
    let browser = std::thread::spawn(move || plan.run());
    // Written whole (the file shows before its bytes): the page is live and has moved on to
    // waiting for the loss.
    let written = |shot: &std::path::Path| std::fs::metadata(shot).is_ok_and(|m| m.len() > 0);
    assert!(eventually(Duration::from_secs(60), || written(&up)));
    proxy.signal("TERM");
    assert!(proxy.wait_exit(Duration::from_secs(10)));
    eventually(Duration::from_secs(60), || lost.exists());
    let mut again = std::process::Command::new(floodgate_bin())
        .arg("--config")
        .arg(&config)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let report = browser.join().unwrap();
    let _ = again.kill();
    let _ = again.wait();
    assert!(report.steps.iter().all(|s| s.ok), "{:?}", report.steps);
    let elsewhere = report
        .requests
        .iter()
        .filter(|u| !u.starts_with(&format!("http://127.0.0.1:{admin}/")))
        .count();
    assert_eq!(elsewhere, 0);
}

/// The overload section: the switch made from the page sheds `low` requests at once, the
/// page shows the level and who set it, and "Back to auto" serves them again.
#[test]
fn the_overload_switch_from_the_console_sheds_low_and_returns_to_auto() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let extra = common::LOW_FEEDS;
    let proxy =
        Proxy::start_with_tables(&[&upstream.addr], "", &admin_tables(dir.path(), ""), extra);
    assert_eq!(proxy.get("/feed", &[]).status(), 200);
    let report = signed_in(&proxy)
        .wait_for_text("[data-test=overload-level]", "auto")
        .type_text("#overload-ttl", "10m")
        .click("[data-test=overload-shed]")
        .wait_for_text("[data-test=overload-level]", "shed (by ops")
        .read("[data-test=overload-level]")
        .run();
    clean(&report, proxy.admin_port);
    assert_eq!(proxy.get("/feed", &[]).status(), 503);
    let (_, state) = control(&proxy, "GET", "/v1/overload", None);
    assert_eq!(state["switch"]["level"], "shed", "{state}");
    assert!(
        state["switch"]["expires_in_s"].as_u64().unwrap() > 500,
        "{state}"
    );
    let report = signed_in(&proxy)
        .click("[data-test=overload-auto]")
        .wait_for_text("[data-test=overload-level]", "auto")
        .run();
    clean(&report, proxy.admin_port);
    assert_eq!(proxy.get("/feed", &[]).status(), 200);
}

#[test]
fn a_reference_looked_up_in_the_console_is_explained() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let proxy =
        Proxy::start_with_tables(&[&upstream.addr], "", &admin_tables(dir.path(), ""), POLICY);
    for _ in 0..5 {
        assert_eq!(status_of(&proxy, FLOODER), 200);
    }
    let refused = proxy.get("/x", &[("x-api-key", FLOODER)]);
    assert_eq!(refused.status(), 429);
    let body: serde_json::Value = refused.json().unwrap();
    let reference = body["ref"].as_str().unwrap().to_owned();
    let report = signed_in(&proxy)
        .type_text("[data-test=lookup-ref]", &reference)
        .click("[data-test=lookup-button]")
        .wait_for_text("[data-test=lookup-result]", "throttled (429)")
        .read("[data-test=lookup-result]")
        .clear("[data-test=lookup-ref]")
        .type_text("[data-test=lookup-ref]", "0123456789abcdef0123456789abcdef")
        .click("[data-test=lookup-button]")
        .wait_for_text("[data-test=lookup-note]", "No instance keeps")
        .run();
    for (i, step) in report.steps.iter().enumerate() {
        assert!(step.ok, "step {i} failed: {step:?}");
    }
    // The browser logs the unknown reference's 404 as a failed load; nothing else.
    let unexpected: Vec<_> = report
        .console
        .iter()
        .filter(|e| {
            !e.message
                .contains("/v1/decisions/0123456789abcdef0123456789abcdef")
        })
        .collect();
    assert!(unexpected.is_empty(), "console: {unexpected:?}");
    let shown = report.steps[7].value.as_deref().unwrap();
    assert!(shown.contains("per-user: throttled"), "{shown}");
    assert!(shown.contains(&reference), "{shown}");
    assert!(!shown.contains(FLOODER), "never the raw key: {shown}");
}
