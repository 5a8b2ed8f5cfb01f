//! Hardening findings, end to end, each test named after the finding it pins: bearer tokens
//! that leave out a configured `iss` / `aud`, cookie spellings that earned fresh buckets, and
//! Redis secrets printed by `--test`.

mod common;

use common::{Proxy, Upstream};
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use serde_json::json;
use std::process::Command;

const SECRET: &str = "an-hmac-secret-for-the-tests-0123456789";

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn bearer(claims: serde_json::Value) -> String {
    let token = encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(SECRET.as_bytes()),
    )
    .unwrap();
    format!("Bearer {token}")
}

#[test]
fn jwt_issuer_and_audience_are_required_when_configured() {
    let upstream = Upstream::start();
    let config = format!(
        "[identity]\nsources = [\"jwt:sub\", \"ip\"]\non_invalid_token = \"reject\"\n\n\
         [identity.jwt]\nalgorithms = [\"HS256\"]\nsecret = \"{SECRET}\"\n\
         issuer = \"auth\"\naudience = \"api\"\n\n\
         [[policy]]\nname = \"per-user\"\ncapacity = 10\nrate = \"1/h\"\n"
    );
    let proxy = Proxy::start(&[&upstream.addr], &config);
    let exp = now() + 300;
    let status = |claims| {
        let auth = bearer(claims);
        proxy
            .get("/", &[("authorization", &auth)])
            .status()
            .as_u16()
    };
    assert_eq!(
        status(json!({"sub": "a", "iss": "auth", "aud": "api", "exp": exp})),
        200
    );
    let missing = [
        json!({"sub": "a", "aud": "api", "exp": exp}),
        json!({"sub": "a", "iss": "auth", "exp": exp}),
        json!({"sub": "a", "exp": exp}),
    ];
    for claims in missing {
        assert_eq!(status(claims.clone()), 401, "{claims}");
    }
    assert_eq!(
        upstream.served(),
        1,
        "no token without iss or aud got through"
    );
}

#[test]
fn cookie_spellings_share_one_bucket() {
    let upstream = Upstream::start();
    let config = "[identity]\nsources = [\"cookie:sid\", \"ip\"]\n\n\
                  [[policy]]\nname = \"per-session\"\ncapacity = 1\nrate = \"1/h\"\n";
    let proxy = Proxy::start(&[&upstream.addr], config);
    let status = |cookie: &str| proxy.get("/", &[("cookie", cookie)]).status().as_u16();
    assert_eq!(status("sid=dave"), 200);
    assert_eq!(status("sid= dave"), 429, "whitespace earns no fresh bucket");
    assert_eq!(status("sid=\"dave\""), 429, "quotes earn no fresh bucket");
    assert_eq!(status("theme=dark; sid = \"dave\" "), 429);
    assert_eq!(
        status("sid=erin"),
        200,
        "another caller has a bucket of its own"
    );
}

#[test]
fn redis_url_secrets_are_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("floodgate.toml");
    for url in [
        "redis+unix:///tmp/x.sock?pass=SECRET",
        "unix:///tmp/x.sock?password=SECRET",
        "redis://:SECRET@127.0.0.1:6379",
        "rediss://u:SECRET@127.0.0.1:1/0",
        "redis://127.0.0.1?password=SECRET",
    ] {
        let config = format!(
            "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n\
             [store]\nkind = \"redis\"\nurl = \"{url}\"\n\n\
             [[policy]]\nname = \"p\"\ncapacity = 10\nrate = \"10/s\"\n"
        );
        std::fs::write(&path, config).unwrap();
        let out = Command::new(common::floodgate_bin())
            .arg("--config")
            .arg(&path)
            .arg("--test")
            .output()
            .expect("run floodgate --test");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{url}: {stderr}");
        assert!(stdout.contains("store           redis "), "{stdout}");
        assert!(
            !stdout.contains("SECRET") && !stderr.contains("SECRET"),
            "{url} printed:\n{stdout}{stderr}"
        );
    }
}
