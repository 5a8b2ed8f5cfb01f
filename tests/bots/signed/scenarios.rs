//! Signed agents end to end: the real binary, key directories over HTTPS on loopback under a
//! test CA, requests signed by the test's own agent (web-bot-auth's signer and PyPI's
//! `http-message-signatures`), sent from several loopback addresses.

use super::directory::{Directories, Mode};
use super::signer::{Headers, Signer};
use crate::common::redis::RedisServer;
use crate::common::{client_from, free_port, Proxy, Upstream};
use std::path::Path;
use std::time::{Duration, Instant};

/// Signed requests to `/observe` are denied with a body naming what they showed; verified
/// signed agents have 5 requests a day to `/bucket`, one bucket per agent.
const POLICIES: &str = r#"
[[policy]]
name = "observe"
action = "deny"
match = { path_prefix = "/observe", bot = ["signed-agent", "spoofed"] }

[[policy]]
name = "agents"
capacity = 5
rate = "5/d"
sources = ["agent"]
match = { path_prefix = "/bucket", bot = ["signed-agent"], verified = true }
"#;

/// The directories of `agents` may be fetched, trusting `ca`.
fn config(agents: &[&str], ca: &Path) -> String {
    let agents: Vec<String> = agents.iter().map(|a| format!("\"{a}\"")).collect();
    format!(
        "[bots.signed]\nagents = [{}]\nca_file = \"{}\"\n{POLICIES}",
        agents.join(", "),
        ca.display()
    )
}

/// What a request showed, as the observing policy's refusal says.
#[derive(Debug)]
struct Seen {
    bot: String,
    agent: String,
    verified: bool,
    took: Duration,
}

fn send(proxy: &Proxy, from: &str, path: &str, headers: &Headers) -> (u16, String, Duration) {
    let mut request = client_from(from).get(proxy.url(path));
    for (name, value) in headers {
        request = request.header(name, value);
    }
    let started = Instant::now();
    let answer = request.send().expect("the proxy answers");
    let status = answer.status().as_u16();
    (status, answer.text().unwrap_or_default(), started.elapsed())
}

fn observe(proxy: &Proxy, headers: &Headers) -> Seen {
    let (status, body, took) = send(proxy, "127.0.0.1", "/observe", headers);
    assert_eq!(status, 403, "{body}");
    let body: serde_json::Value = serde_json::from_str(&body).expect("a problem body");
    Seen {
        bot: body["bot"].as_str().unwrap_or_default().to_owned(),
        agent: body["crawler"].as_str().unwrap_or_default().to_owned(),
        verified: body["verified"].as_bool().unwrap_or(false),
        took,
    }
}

/// The proxy's authority, as a signature covers it.
fn authority(proxy: &Proxy) -> String {
    format!("127.0.0.1:{}", proxy.port)
}

#[test]
fn a_signed_agent_is_verified_by_its_directory_and_one_bucket_holds_it_across_addresses() {
    let signer = Signer::new();
    let files = tempfile::tempdir().expect("temp dir");
    let jwks = files.path().join("jwks.json");
    signer.write_directory(&jwks);
    let port = free_port();
    let directories = Directories::start(&[(port, Mode::Keys(&jwks))]);
    let agent = format!("127.0.0.1:{port}");
    let link = format!("https://{agent}");
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], &config(&[&agent], &directories.ca));
    let site = authority(&proxy);

    // The keys are not known yet: unfinished (not verified, not spoofed), answered at once,
    // and the directory is fetched in the background.
    let first = observe(&proxy, &signer.sign(&site, &link));
    assert_eq!(
        (first.bot.as_str(), first.verified),
        ("signed-agent", false)
    );
    assert!(first.took < Duration::from_secs(1), "{first:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let verified = loop {
        let seen = observe(&proxy, &signer.sign(&site, &link));
        if seen.verified || Instant::now() > deadline {
            break seen;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(
        (
            verified.bot.as_str(),
            verified.agent.as_str(),
            verified.verified
        ),
        ("signed-agent", agent.as_str(), true)
    );
    assert!(directories
        .hits()
        .contains("/.well-known/http-message-signatures-directory"));

    // A second implementation's signature holds too.
    let python = observe(&proxy, &signer.sign_in_python(&site, &link));
    assert!(python.verified, "{python:?}");

    // A signature is good once: its replay is refused as spoofed.
    let once = signer.sign(&site, &link);
    assert!(observe(&proxy, &once).verified);
    let replayed = observe(&proxy, &once);
    assert_eq!(
        (replayed.bot.as_str(), replayed.verified),
        ("spoofed", false)
    );

    // A tampered signature, or one made for another site, is spoofed.
    let mut tampered = signer.sign(&site, &link);
    let signature = &mut tampered[2].1;
    let flipped = if signature.as_bytes()[10] == b'A' {
        "B"
    } else {
        "A"
    };
    signature.replace_range(10..11, flipped);
    let seen = observe(&proxy, &tampered);
    assert_eq!((seen.bot.as_str(), seen.verified), ("spoofed", false));
    let elsewhere = observe(&proxy, &signer.sign("other.example", &link));
    assert_eq!(elsewhere.bot, "spoofed");

    // One bucket holds the agent whatever address it comes from.
    let statuses: Vec<u16> = (0..6)
        .map(|i| {
            let from = format!("127.0.0.{}", 2 + i % 5);
            send(&proxy, &from, "/bucket", &signer.sign(&site, &link)).0
        })
        .collect();
    assert_eq!(statuses, [200, 200, 200, 200, 200, 429]);
    assert!(proxy.metric("floodgate_signed_requests_total{result=\"verified\"}") >= 9.0);
    assert!(proxy.metric("floodgate_signed_directory_fetches_total{result=\"ok\"}") >= 1.0);
}

#[test]
fn slow_garbage_huge_or_unlisted_directories_never_verify_nor_hold_a_request() {
    let signer = Signer::new();
    let files = tempfile::tempdir().expect("temp dir");
    let jwks = files.path().join("jwks.json");
    signer.write_directory(&jwks);
    let [good, slow, garbage, big] = [free_port(), free_port(), free_port(), free_port()];
    let directories = Directories::start(&[
        (good, Mode::Keys(&jwks)),
        (slow, Mode::Slow),
        (garbage, Mode::Garbage),
        (big, Mode::Big),
    ]);
    let listed = [slow, garbage, big].map(|port| format!("127.0.0.1:{port}"));
    let listed_refs: Vec<&str> = listed.iter().map(String::as_str).collect();
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], &config(&listed_refs, &directories.ca));
    let site = authority(&proxy);
    // The good directory is not on the allow-list, under either loopback name.
    let mut links: Vec<String> = listed.iter().map(|a| format!("https://{a}")).collect();
    links.push(format!("https://127.0.0.1:{good}"));
    links.push(format!("https://localhost:{good}"));
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(4) {
        for link in &links {
            let seen = observe(&proxy, &signer.sign(&site, link));
            assert!(!seen.verified, "{link}: {seen:?}");
            assert_eq!(
                seen.bot, "signed-agent",
                "{link}: unverifiable, not spoofed"
            );
            assert!(seen.took < Duration::from_secs(1), "{link} held: {seen:?}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let hits = directories.hits();
    assert!(!hits.contains(&good.to_string()), "{hits}");
    for port in [slow, garbage, big] {
        let asked = hits
            .lines()
            .filter(|l| l.starts_with(&port.to_string()))
            .count();
        assert_eq!(asked, 1, "fetched once, then retried only later: {hits}");
    }
    let errors = proxy.metric("floodgate_signed_directory_fetches_total{result=\"error\"}");
    assert_eq!(errors, 3.0);
    assert_eq!(
        proxy.metric("floodgate_signed_requests_total{result=\"verified\"}"),
        0.0
    );
}

#[test]
fn a_signature_used_once_anywhere_in_the_fleet_is_refused_everywhere_else() {
    let signer = Signer::new();
    let redis = RedisServer::start();
    let jwk = serde_json::to_value(signer.jwk()).expect("a JWK");
    let config = format!(
        "[store]\nkind = \"redis\"\nurl = \"{}\"\n\n[[bots.signed.key]]\nagent = \"Agent.example\"\n\
         jwk = {{ kty = \"OKP\", crv = \"Ed25519\", x = \"{}\" }}\n{POLICIES}",
        redis.url(),
        jwk["x"].as_str().expect("x")
    );
    let upstream = Upstream::start();
    let a = Proxy::start(&[&upstream.addr], &config);
    let b = Proxy::start(&[&upstream.addr], &config);
    // Both proxies serve one site: the signature's authority is theirs alike.
    let mut headers = signer.sign("site.example", "https://agent.example");
    headers.push(("host".into(), "site.example".into()));
    let seen = observe(&a, &headers);
    assert_eq!(
        (seen.bot.as_str(), seen.agent.as_str(), seen.verified),
        ("signed-agent", "agent.example", true),
        "verified under the key written in the config, no directory asked"
    );
    let replayed = observe(&b, &headers);
    assert_eq!(
        (replayed.bot.as_str(), replayed.verified),
        ("spoofed", false)
    );
    let fresh = {
        let mut headers = signer.sign_in_python("site.example", "https://agent.example");
        headers.push(("host".into(), "site.example".into()));
        headers.push((
            "user-agent".into(),
            "Mozilla/5.0 (compatible; Googlebot/2.1)".into(),
        ));
        headers
    };
    let seen = observe(&b, &fresh);
    assert_eq!(
        (seen.bot.as_str(), seen.verified),
        ("signed-agent", true),
        "a signature outranks the User-Agent's claim"
    );
}
