//! Issue 73 in a real browser: while the backend is overloaded, headless Chromium as an
//! anonymous visitor loads a page of an `on_overload = "challenge"` policy, gets the challenge
//! page, solves it (the page's own script does the proof of work) and lands on the backend's
//! page (its pass raises it to `high`, ahead of the swarm). Overloaded by the operators' switch
//! (`PUT /v1/overload`, "under attack"), and by a real swarm against a backend of fixed
//! capacity (`max_in_flight = 4`). The solve time is printed (`solve ms`).

use crate::common;

use common::browser::{Plan, Report};
use common::capacity::Capacity;
use common::control_api::{admin_tables, control};
use common::wait::eventually;
use common::{header, serial, Proxy};
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// What the capacity backend's page says, which the browser waits for.
const SERVED: &str = "served";

const WORKERS: usize = 4;
const SERVICE: Duration = Duration::from_millis(40);
/// Clients of the swarm: four times the backend's workers, each sending as fast as it is
/// answered.
const SWARM: usize = 16;

/// Page loads of `/articles` are challenged while overloaded; `[overload]` holds the backend
/// to its workers.
fn config() -> String {
    format!(
        r#"
[[policy]]
name = "articles"
match = {{ path_prefix = "/articles" }}
on_overload = "challenge"

[overload]
max_in_flight = {WORKERS}
"#
    )
}

/// Loads `url` in a fresh Chromium until the backend's page shows.
fn visit(url: &str) -> Report {
    Plan::new()
        .visit(url)
        .until_text(SERVED)
        .step_timeout(Duration::from_secs(60))
        .run()
}

/// The browser met the challenge page first (403), then landed on the backend's page (200).
fn challenged_then_served(report: &Report, url: &str) {
    let step = &report.steps[0];
    assert!(!step.timed_out, "the browser landed: {step:?}");
    assert_eq!(step.url, url);
    assert_eq!(step.status, Some(200), "{step:?}");
    assert!(step.text.contains(SERVED), "{}", step.text);
    let statuses: Vec<u16> = step.documents.iter().map(|d| d.status).collect();
    assert_eq!(
        statuses.first(),
        Some(&403),
        "the challenge came first: {step:?}"
    );
    assert!(
        report.cookie("floodgate_pass").is_some(),
        "{:?}",
        report.cookies
    );
    eprintln!("solve ms {} (documents {statuses:?})", step.millis);
}

/// Whether a page load of `url` without a pass gets the challenge page.
fn challenged(url: &str) -> bool {
    let response = reqwest::blocking::Client::new()
        .get(url)
        .header("accept", "text/html")
        .timeout(Duration::from_secs(5))
        .send();
    response.is_ok_and(|r| r.status() == 403 && header(&r, "content-type").starts_with("text/html"))
}

#[test]
fn under_the_challenge_switch_chromium_solves_the_challenge_and_is_served() {
    let _alone = serial::alone();
    let backend = Capacity::start(WORKERS, Duration::from_millis(1));
    let dir = tempfile::tempdir().unwrap();
    let proxy = Proxy::start_with_tables(
        &[&backend.addr],
        "",
        &admin_tables(dir.path(), ""),
        &config(),
    );
    let url = proxy.url("/articles/7");
    let (status, state) = control(
        &proxy,
        "PUT",
        "/v1/overload",
        Some(json!({"level": "challenge", "ttl": "1m"})),
    );
    assert_eq!(status, 200, "{state}");
    assert!(challenged(&url), "a page load without a pass is challenged");
    let before = backend.served();

    let report = visit(&url);
    challenged_then_served(&report, &url);
    assert!(backend.served() > before, "the backend served the browser");
    let series =
        "floodgate_overload_shed_total{action=\"challenge\",pool=\"default\",priority=\"normal\"}";
    assert!(proxy.metric(series) >= 2.0, "{series}");
}

#[test]
fn under_a_real_swarm_chromium_solves_the_challenge_and_is_served() {
    let _alone = serial::alone();
    let backend = Capacity::start(WORKERS, SERVICE);
    let proxy = Proxy::start(&[&backend.addr], &config());
    let url = proxy.url("/articles/7");
    assert!(!challenged(&url), "not overloaded yet");

    let stop = AtomicBool::new(false);
    let shed = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..SWARM {
            scope.spawn(|| swarm_client(&proxy, &stop, &shed));
        }
        let overloaded = eventually(Duration::from_secs(10), || challenged(&url));
        let report = overloaded.then(|| visit(&url));
        let still = shed.load(Ordering::Relaxed);
        stop.store(true, Ordering::Relaxed);
        assert!(overloaded, "the swarm overloaded the pool");
        let report = report.expect("the browser ran");
        challenged_then_served(&report, &url);
        assert!(still > 0, "the swarm was shed meanwhile");
    });
    eprintln!(
        "swarm: {} shed, the backend held at most {}",
        shed.load(Ordering::Relaxed),
        backend.most_held()
    );
    assert!(
        backend.most_held() <= WORKERS + 1,
        "held {}",
        backend.most_held()
    );
}

/// One client of the swarm: API calls under the challenge policy (they cannot take it: shed
/// while overloaded) and page loads elsewhere (they wait for a slot), as fast as answered,
/// until `stop`; counts the 503s in `shed`.
fn swarm_client(proxy: &Proxy, stop: &AtomicBool, shed: &AtomicUsize) {
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client");
    let mut n = 0usize;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let path = if n.is_multiple_of(2) {
            "/articles/feed"
        } else {
            "/home"
        };
        let sent = client
            .get(proxy.url(path))
            .header("accept", "application/json")
            .send();
        if sent.is_ok_and(|r| r.status() == 503) {
            shed.fetch_add(1, Ordering::Relaxed);
        }
    }
}
