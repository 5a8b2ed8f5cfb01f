//! The HTTP/2 fingerprint of a real Chromium over Floodgate's TLS listener: what Floodgate
//! tells the backend (`upstream.h2fp_header`) equals what Chromium's own net log says it sent
//! (its SETTINGS, its connection WINDOW_UPDATE, the pseudo-header order of its first request),
//! and is Chrome's published fingerprint.

use crate::common;

use common::browser::Plan;
use common::certs::make_certificates;
use common::{free_port, Proxy, Upstream};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// Chrome's HTTP/2 fingerprint as published (Akamai's format).
const CHROME: &str = "1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p";

/// A Chrome User-Agent, as a scraper driving Chromium would set.
const CHROME_UA: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
                         Chrome/156.0.0.0 Safari/537.36";

/// The events of the net log at `path`, each with its type's name.
fn net_log_events(path: &Path) -> Vec<(String, Value)> {
    let text = std::fs::read_to_string(path).expect("Chromium wrote its net log");
    // A log cut at exit may lack its closing brackets.
    let log: Value = serde_json::from_str(&text)
        .or_else(|_| serde_json::from_str(&format!("{}]}}", text.trim_end().trim_end_matches(','))))
        .expect("the net log is JSON");
    let names: HashMap<u64, String> = log["constants"]["logEventTypes"]
        .as_object()
        .expect("event types")
        .iter()
        .map(|(name, id)| (id.as_u64().unwrap(), name.clone()))
        .collect();
    log["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| {
            Some((
                names.get(&e["type"].as_u64()?)?.clone(),
                e["params"].clone(),
            ))
        })
        .collect()
}

/// The fingerprint of what Chromium's net log says it sent first on its HTTP/2 session.
fn fingerprint_from(events: &[(String, Value)]) -> String {
    let first = |kind: &str| {
        events
            .iter()
            .find(|(name, params)| name == kind && params["stream_id"].as_u64().unwrap_or(0) == 0)
            .map(|(_, params)| params.clone())
    };
    let settings = first("HTTP2_SESSION_SEND_SETTINGS").expect("SETTINGS sent");
    // Entries read `[id:1 (SETTINGS_HEADER_TABLE_SIZE) value:65536]`.
    let entries: Vec<String> = settings["settings"]
        .as_array()
        .expect("settings")
        .iter()
        .map(|entry| {
            let text = entry.as_str().unwrap();
            let id = text.split("id:").nth(1).unwrap().split(' ').next().unwrap();
            let value = text.split("value:").nth(1).unwrap().trim_end_matches(']');
            format!("{id}:{value}")
        })
        .collect();
    let window = first("HTTP2_SESSION_SEND_WINDOW_UPDATE")
        .map_or("00".to_owned(), |params| params["delta"].to_string());
    let headers = events
        .iter()
        .find(|(name, _)| name == "HTTP2_SESSION_SEND_HEADERS")
        .map(|(_, params)| params["headers"].clone())
        .expect("HEADERS sent");
    let order: Vec<&str> = headers
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| match h.as_str()?.split(": ").next()? {
            ":method" => Some("m"),
            ":authority" => Some("a"),
            ":scheme" => Some("s"),
            ":path" => Some("p"),
            _ => None,
        })
        .collect();
    let priorities = match events
        .iter()
        .any(|(name, _)| name == "HTTP2_SESSION_SEND_PRIORITY")
    {
        true => panic!("Chromium sent PRIORITY frames: read them too"),
        false => "0",
    };
    format!(
        "{}|{window}|{priorities}|{}",
        entries.join(";"),
        order.join(",")
    )
}

#[test]
fn chromiums_fingerprint_is_what_it_says_it_sent_and_chromes_published_one() {
    let dir = tempfile::tempdir().unwrap();
    make_certificates(dir.path());
    let file = |name: &str| dir.path().join(name).display().to_string();
    let upstream = Upstream::start();
    let tls_port = free_port();
    let server = format!(
        "tls_listen = \"127.0.0.1:{tls_port}\"\ntls_cert_file = \"{}\"\n\
         tls_key_file = \"{}\"\naccess_log = true",
        file("server.pem"),
        file("server.key")
    );
    let proxy = Proxy::start_with_server(&[&upstream.addr], &server, "h2fp_header = \"x-h2fp\"");
    let net_log = dir.path().join("netlog.json");
    let report = Plan::new()
        .insecure_certs()
        .user_agent(CHROME_UA)
        .net_log(&net_log)
        .visit(format!("https://127.0.0.1:{tls_port}/page"))
        .run();
    assert_eq!(report.steps.last().and_then(|s| s.status), Some(200));
    let told = upstream.last_header("x-h2fp");
    assert_eq!(told.len(), 1, "{told:?}");
    let events = net_log_events(&net_log);
    let said = fingerprint_from(&events);
    eprintln!("chromium: told {} / net log {said}", told[0]);
    assert_eq!(told[0], said, "Floodgate reads what Chromium sent");
    assert_eq!(
        told[0], CHROME,
        "Chromium sends Chrome's published fingerprint"
    );
    let logged = format!(" h2fp={CHROME}");
    assert!(proxy
        .log_when(|log| log.contains(&logged))
        .contains(&logged));
}
