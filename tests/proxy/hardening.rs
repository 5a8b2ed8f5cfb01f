//! Hardening findings, end to end, each test named after the finding it pins: bearer tokens
//! that leave out a configured `iss` / `aud`, cookie spellings that earned fresh buckets, Redis
//! secrets printed by `--test`, eviction and identity digests here; path spellings, requests
//! without `Host` and forwarding headers in `requests`; slow heads, idle connections and
//! connection caps in `connections`; the same probes on the check, admin and rls listeners,
//! and refused heads in the access log, in `listeners`; the asterisk target, repeated and
//! underscore-spelled headers in `headers`.

use crate::common;

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

/// The digest prefix `/offenders` lists first, after `bot` was throttled twice.
fn offender_digest(proxy: &Proxy) -> String {
    for _ in 0..3 {
        proxy.get("/", &[("x-api-key", "bot")]);
    }
    let json: serde_json::Value = proxy.admin("/offenders").unwrap().json().unwrap();
    json["offenders"][0]["identity"]
        .as_str()
        .unwrap_or_else(|| panic!("no offender in {json}"))
        .to_owned()
}

#[test]
fn offenders_and_log_prefixes_cannot_be_reversed_by_enumeration() {
    use floodgate::identity::{Identity, IdentityKey};
    let upstream = Upstream::start();
    let policy = "[[policy]]\nname = \"p\"\ncapacity = 1\nrate = \"1/h\"\n";
    let unkeyed = |key: &IdentityKey| Identity::of(key, "header:x-api-key", b"bot").hex();
    // Memory store, nothing configured: each process has a random key of its own.
    let memory = format!("[identity]\nsources = [\"header:x-api-key\"]\n\n{policy}");
    let (a, b) = (
        Proxy::start(&[&upstream.addr], &memory),
        Proxy::start(&[&upstream.addr], &memory),
    );
    let (digest_a, digest_b) = (offender_digest(&a), offender_digest(&b));
    assert_ne!(digest_a, digest_b, "per-process keys");
    assert!(!unkeyed(&IdentityKey::from_bytes([0; 32])).starts_with(&digest_a));
    // A configured key: stable across processes, and computable by whoever holds it.
    let secret = "a configured identity hash key of 32+ bytes";
    let configured = memory.replace(
        "[identity]\n",
        &format!("[identity]\nhash_key = \"{secret}\"\n"),
    );
    let (c, d) = (
        Proxy::start(&[&upstream.addr], &configured),
        Proxy::start(&[&upstream.addr], &configured),
    );
    let expected = unkeyed(&IdentityKey::from_secret(secret).unwrap());
    assert_eq!(offender_digest(&c), expected[..16]);
    assert_eq!(offender_digest(&d), expected[..16]);
    // Redis, nothing configured: the fleet agrees on the key the first instance stored.
    let redis = common::redis::RedisServer::start();
    let shared = format!(
        "[store]\nkind = \"redis\"\nurl = \"{}\"\n\n{memory}",
        redis.url()
    );
    let (e, f) = (
        Proxy::start(&[&upstream.addr], &shared),
        Proxy::start(&[&upstream.addr], &shared),
    );
    assert_eq!(e.get("/", &[("x-api-key", "bot")]).status(), 200);
    assert_eq!(
        f.get("/", &[("x-api-key", "bot")]).status(),
        429,
        "one bucket"
    );
    let mut conn = redis.conn();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(crate::common::redis::BUCKET_KEYS)
        .query(&mut conn)
        .unwrap();
    assert_eq!(keys.len(), 1, "{keys:?}");
    let stored: String = redis::cmd("GET")
        .arg("floodgate:hash_key")
        .query(&mut conn)
        .unwrap();
    let fleet = unkeyed(&IdentityKey::from_secret(&stored).unwrap());
    assert_eq!(keys[0], format!("floodgate:{{{fleet}}}:p"));
    assert_eq!(offender_digest(&e), offender_digest(&f));
}

#[test]
fn without_redis_at_start_an_instance_warns_and_keys_digests_on_its_own() {
    let upstream = Upstream::start();
    let port = common::free_port();
    let config = format!(
        "[store]\nkind = \"redis\"\nurl = \"redis://127.0.0.1:{port}\"\non_error = \"local\"\n\n\
         [identity]\nsources = [\"header:x-api-key\"]\n\n\
         [[policy]]\nname = \"p\"\ncapacity = 1\nrate = \"1/h\"\n"
    );
    let started = std::time::Instant::now();
    let proxy = Proxy::start(&[&upstream.addr], &config);
    assert!(started.elapsed() < floodgate::app::FLEET_KEY_WAIT * 5);
    assert!(
        proxy.log().contains("uses a random key of its own"),
        "{}",
        proxy.log()
    );
    // It still limits (on its local fallback here).
    assert_eq!(proxy.get("/", &[("x-api-key", "k")]).status(), 200);
    assert_eq!(proxy.get("/", &[("x-api-key", "k")]).status(), 429);
}

mod connections;
pub(crate) mod frames;
mod headers;
mod listeners;
mod requests;
