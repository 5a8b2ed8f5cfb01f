//! Issue 83, "one record": for each kind of answer one proxy can be led to, the access log's
//! `decision=`, `GET /v1/decisions/{ref}`'s `decision`, the span's `floodgate.decision` and the
//! `decision` label of `floodgate_decisions_total` say the same word (and each policy's step
//! in the record is a `floodgate_requests_total` series that moved). Every word of the
//! vocabulary is held alike by a unit test (src/proxy/record/tests.rs).

use crate::common::control_api::{admin_tables, control, explained};
use crate::common::otlp::OtlpReceiver;
use crate::common::wait::within;
use crate::common::{client_from, header, requests_series, Proxy, Upstream};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;

const POLICIES: &str = r#"
[identity]
sources = ["ip"]

[[policy]]
name = "no-admin"
action = "deny"
match = { path_prefix = "/admin" }

[[policy]]
name = "open"
action = "allow"
match = { path_prefix = "/open" }

[[policy]]
name = "pages"
action = "challenge"
match = { path_prefix = "/page" }

[[policy]]
name = "wide"
capacity = 100
rate = "1/h"
match = { path_prefix = "/limited" }

[[policy]]
name = "narrow"
capacity = 1
rate = "1/h"
match = { path_prefix = "/limited" }

[[policy]]
name = "feeds"
match = { path_prefix = "/feed" }
priority = "low"

[overload]
max_in_flight = 8

[robots]
source = "managed"
"#;

/// The `decision=` of the access-log line of request `id`, once it is written.
fn logged(proxy: &Proxy, id: &str) -> String {
    let needle = format!(" id={id} ");
    let mut found = None;
    within(Duration::from_secs(3), || {
        found = proxy.log().lines().find_map(|line| {
            let line = line.contains(&needle).then_some(line)?;
            let word = line.split(' ').find_map(|w| w.strip_prefix("decision="))?;
            Some(word.to_owned())
        });
        found.is_some()
    });
    found.unwrap_or_else(|| panic!("no line for {id}:\n{}", proxy.log()))
}

#[test]
fn the_log_the_record_the_span_and_the_metric_name_each_decision_alike() {
    let upstream = Upstream::start();
    let receiver = OtlpReceiver::start();
    let dir = tempfile::tempdir().unwrap();
    let telemetry = format!(
        "\n[telemetry]\notlp_endpoint = \"{}\"\nsample_ratio = 1.0\n",
        receiver.endpoint
    );
    let proxy = Proxy::start_with_tables(
        &[&upstream.addr],
        "access_log = true",
        &admin_tables(dir.path(), ""),
        &format!("{POLICIES}{telemetry}"),
    );
    let ban = json!({"scope": "cidr", "value": "127.0.83.9/32", "reason": "one record"});
    let (code, made) = control(&proxy, "POST", "/v1/bans", Some(ban));
    assert_eq!(code, 201, "{made}");
    let get = |from: &str, path: &str, accept: &str| {
        client_from(from)
            .get(proxy.url(path))
            .header("accept", accept)
            .send()
            .expect("the proxy answers")
    };
    let html = "text/html";
    let mut asked: Vec<(&str, u16, &str, &str, &str)> = vec![
        ("allowed", 200, "127.0.0.1", "/limited", "*/*"),
        ("throttled", 429, "127.0.0.1", "/limited", "*/*"),
        ("unlimited", 200, "127.0.0.1", "/elsewhere", "*/*"),
        ("denied", 403, "127.0.0.1", "/admin/x", "*/*"),
        ("allowed_by_rule", 200, "127.0.0.1", "/open/x", "*/*"),
        ("challenged", 403, "127.0.0.1", "/page/1", html),
        (
            "solution_malformed",
            400,
            "127.0.0.1",
            "/.floodgate/challenge",
            html,
        ),
        ("robots_txt", 200, "127.0.0.1", "/robots.txt", "*/*"),
    ];
    // A ban takes effect within moments.
    within(Duration::from_secs(3), || {
        get("127.0.83.9", "/elsewhere", "*/*").status() == 403
    })
    .expect("the ban is not enforced");
    asked.push(("banned", 403, "127.0.83.9", "/elsewhere", "*/*"));
    let mut ids = Vec::new();
    for &(word, status, from, path, accept) in &asked {
        let answer = get(from, path, accept);
        assert_eq!(answer.status(), status, "{word}: {path}");
        ids.push((word, header(&answer, "x-request-id")));
    }
    // Last, as it sheds every low request: the switch at `shed`.
    let (code, state) = control(
        &proxy,
        "PUT",
        "/v1/overload",
        Some(json!({"level": "shed", "ttl": "1m"})),
    );
    assert_eq!(code, 200, "{state}");
    let shed = get("127.0.0.1", "/feed", "*/*");
    assert_eq!(shed.status(), 503);
    ids.push(("shed", header(&shed, "x-request-id")));

    let mut counted: BTreeMap<&str, f64> = BTreeMap::new();
    for (word, id) in &ids {
        let why = explained(&proxy, id);
        let span =
            receiver.wait_for(|s| s["kind"] == 2 && s["attributes"]["floodgate.ref"] == **id);
        let said = [
            logged(&proxy, id),
            why["decision"].as_str().unwrap_or_default().to_owned(),
            span["attributes"]["floodgate.decision"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        ];
        assert_eq!(said, [*word; 3], "log, record, span of {id}: {why}");
        *counted.entry(word).or_default() += 1.0;
        // Each policy's step in the record is a series that moved.
        for step in why["policies"].as_array().into_iter().flatten() {
            let (Some(policy), Some(outcome)) = (step["policy"].as_str(), step["outcome"].as_str())
            else {
                continue;
            };
            let series = requests_series(policy, outcome);
            assert!(proxy.metric(&series) >= 1.0, "{series}: {why}");
        }
    }
    // The ban's first requests (the wait above) were banned too.
    let banned = proxy.metric("floodgate_decisions_total{decision=\"banned\"}");
    assert!(banned >= 1.0, "banned: {banned}");
    counted.remove("banned");
    for (word, count) in counted {
        let series = format!("floodgate_decisions_total{{decision=\"{word}\"}}");
        let found = within(Duration::from_secs(3), || proxy.metric(&series) == count);
        assert!(
            found.is_some(),
            "{series}: {} ≠ {count}",
            proxy.metric(&series)
        );
    }
    // The step a refused request's other policy said: counted as it was explained.
    let throttled = &ids[1].1;
    let why: Value = explained(&proxy, throttled);
    assert_eq!(why["policies"][0]["outcome"], "throttled_by_other", "{why}");
}
