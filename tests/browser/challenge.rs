//! Issue 62 in a real browser: headless Chromium (Debian's `chromium`, driven by Selenium)
//! meets the challenge on Floodgate's defaults, solves it (the `pow` page's own script, the
//! `refresh` page's own reload), lands on the backend's page with its query intact and stays
//! there without a new challenge; with `sources = ["pass"]`, each browser is a caller of its
//! own; with a Privacy Pass issuer trusted (the page a 401 offering its token challenge),
//! a browser without a token still solves the proof of work. The median solve time is printed
//! (`solve ms`).

use crate::common;

use common::browser::{Plan, Report};
use common::Proxy;
use common::Upstream;
use std::time::Duration;

use crate::issuer::TestIssuer;
use crate::tokens::config_keyed;

/// The word the backend's page says (`?say=`), which a browser waits for.
const LANDED: &str = "landed-on-the-backend";

fn start(extra: &str) -> (Upstream, Proxy) {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], extra);
    (upstream, proxy)
}

/// A page of the backend, behind the challenge.
fn page(proxy: &Proxy, query: &str) -> String {
    proxy.url(&format!("/articles/7?say={LANDED}&{query}"))
}

/// Solves the challenge at `url` in a fresh browser and then loads it `again` more times.
fn solve(url: &str, again: usize) -> Report {
    let mut plan = Plan::new()
        .visit(url)
        .until_text(LANDED)
        .step_timeout(Duration::from_secs(60));
    for _ in 0..again {
        plan = plan.visit(url);
    }
    plan.run()
}

fn median(mut values: Vec<u64>) -> u64 {
    values.sort_unstable();
    values[values.len() / 2]
}

fn lands_with_query_and_stays(kind: &str, extra: &str) {
    let (upstream, proxy) = start(extra);
    let url = page(&proxy, "x=1&y=two");
    let mut solves = Vec::new();
    for round in 0..3 {
        let again = if round == 0 { 20 } else { 0 };
        let report = solve(&url, again);
        let landed = &report.steps[0];
        assert!(!landed.timed_out, "{kind}: the browser landed: {landed:?}");
        assert_eq!(landed.url, url, "{kind}: the query is intact");
        assert_eq!(landed.status, Some(200));
        assert!(report.cookie("floodgate_pass").is_some_and(|c| c.http_only));
        for step in &report.steps[1..] {
            assert_eq!(step.status, Some(200), "{kind}: no new challenge: {step:?}");
            assert!(step.text.contains(LANDED));
        }
        solves.push(landed.millis);
    }
    let issued = format!(
        "floodgate_challenges_total{{kind=\"{kind}\",policy=\"browsers\",result=\"issued\"}}"
    );
    assert_eq!(
        proxy.metric(&issued),
        3.0,
        "one challenge per browser, no more"
    );
    assert_eq!(
        upstream.last_target().as_deref(),
        Some(&url[proxy.url("").len()..])
    );
    eprintln!(
        "{kind}: solve ms {solves:?}, median {}",
        median(solves.clone())
    );
}

#[test]
fn chromium_solves_the_pow_page_and_lands_with_its_query() {
    lands_with_query_and_stays(
        "pow",
        "[[policy]]\nname = \"browsers\"\naction = \"challenge\"\n",
    );
}

#[test]
fn chromium_follows_the_refresh_page_and_lands_with_its_query() {
    let config =
        "[[policy]]\nname = \"browsers\"\naction = \"challenge\"\nchallenge = \"refresh\"\n";
    lands_with_query_and_stays("refresh", config);
}

#[test]
fn each_browser_gets_its_own_bucket_per_pass() {
    let config = "[[policy]]\nname = \"browsers\"\naction = \"challenge\"\n\n\
                  [[policy]]\nname = \"per-pass\"\ncapacity = 5\nrate = \"1/h\"\nsources = [\"pass\"]\n";
    let (_upstream, proxy) = start(config);
    let url = page(&proxy, "n=1");
    for browser in 0..2 {
        let report = solve(&url, 5);
        let statuses: Vec<Option<u16>> = report.steps.iter().map(|s| s.status).collect();
        let ok = Some(200);
        assert_eq!(
            statuses,
            [ok, ok, ok, ok, ok, Some(429)],
            "browser {browser}"
        );
    }
}

#[test]
fn without_javascript_the_pow_page_explains_itself_and_never_passes() {
    let (upstream, proxy) = start("[[policy]]\nname = \"browsers\"\naction = \"challenge\"\n");
    let report = Plan::new()
        .javascript(false)
        .visit(page(&proxy, "x=1"))
        .until_text(LANDED)
        .step_timeout(Duration::from_secs(3))
        .run();
    let step = &report.steps[0];
    assert!(step.timed_out, "no pass without the script");
    assert_eq!(step.status, Some(403));
    assert!(
        step.text.to_lowercase().contains("javascript"),
        "{}",
        step.text
    );
    assert_eq!(upstream.served(), 0);
}

#[test]
fn chromium_without_a_token_solves_the_pow_page_offering_one() {
    let (upstream, proxy) = start(&config_keyed(&TestIssuer::a()));
    let met = proxy.get("/articles/7", &[("accept", "text/html")]);
    assert_eq!(met.status(), 401, "the challenge, on a 401");
    assert!(common::header(&met, "www-authenticate").starts_with("PrivateToken "));
    let url = page(&proxy, "x=1");
    let report = solve(&url, 1);
    let landed = &report.steps[0];
    assert!(!landed.timed_out, "the browser landed: {landed:?}");
    assert_eq!(
        (landed.url.as_str(), landed.status),
        (url.as_str(), Some(200))
    );
    assert!(report.cookie("floodgate_pass").is_some_and(|c| c.http_only));
    assert_eq!(report.steps[1].status, Some(200), "no new challenge");
    assert_eq!(upstream.served(), 2, "the landing and the reload");
    assert_eq!(
        proxy.metric("floodgate_privacy_pass_total{issuer=\"issuer.test\",result=\"redeemed\"}"),
        0.0
    );
    eprintln!("pow behind a 401: solved in {} ms", landed.millis);
}
