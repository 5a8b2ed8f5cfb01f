//! Identity that cannot be faked, and per-route policies, end to end: forwarded addresses
//! only from trusted proxies, IPv6 prefixes, query-keyed routes, tiers, shadow mode,
//! allow/deny lists, hostile input, and refusals that fail closed. Token verification
//! (forged, expired, public keys, JWKS, algorithm confusion) is in `tokens`.

use crate::common;

use common::{requests_series, Proxy, Upstream};
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use serde_json::json;

const SECRET: &str = "an-hmac-secret-for-the-tests-0123456789";

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/jwt/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn hs256(claims: serde_json::Value, secret: &str) -> String {
    encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(secret.as_bytes()),
    )
    .unwrap()
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

fn jwt_config(jwt_table: &str, on_invalid: &str, capacity: u64) -> String {
    format!(
        "[identity]\nsources = [\"jwt:sub\", \"ip\"]\non_invalid_token = \"{on_invalid}\"\n\n\
         [identity.jwt]\n{jwt_table}\n\n\
         [[policy]]\nname = \"per-user\"\ncapacity = {capacity}\nrate = \"1/h\"\n"
    )
}

const BY_IP: &str = "[identity]\nsources = [\"ip\"]\n";

fn ip_policy(capacity: u64) -> String {
    format!("[[policy]]\nname = \"per-ip\"\ncapacity = {capacity}\nrate = \"1/h\"\n")
}

#[test]
fn rotating_forwarded_for_from_an_untrusted_peer_earns_no_fresh_bucket() {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], &format!("{BY_IP}\n{}", ip_policy(2)));
    let statuses: Vec<u16> = (0..6)
        .map(|i| {
            let spoof = format!("203.0.113.{i}");
            let forwarded = format!("for={spoof}");
            proxy
                .get(
                    "/",
                    &[("x-forwarded-for", &spoof), ("forwarded", &forwarded)],
                )
                .status()
                .as_u16()
        })
        .collect();
    assert_eq!(statuses, [200, 200, 429, 429, 429, 429]);
}

#[test]
fn behind_a_trusted_proxy_the_real_client_is_limited() {
    let upstream = Upstream::start();
    let config = format!(
        "{BY_IP}\n[identity.ip]\ntrusted_proxies = [\"127.0.0.0/8\"]\n\n{}",
        ip_policy(2)
    );
    let proxy = Proxy::start(&[&upstream.addr], &config);
    let from = |xff: &str| {
        proxy
            .get("/", &[("x-forwarded-for", xff)])
            .status()
            .as_u16()
    };
    // The client 198.51.100.1 forges entries to the left: they change nothing.
    assert_eq!(from("6.6.6.6, 198.51.100.1"), 200);
    assert_eq!(from("7.7.7.7, 198.51.100.1"), 200);
    assert_eq!(from("198.51.100.1"), 429);
    // Another client behind the same proxy has its own bucket.
    assert_eq!(from("198.51.100.2"), 200);
}

#[test]
fn all_addresses_of_one_ipv6_64_share_a_bucket() {
    let upstream = Upstream::start();
    let config = format!(
        "{BY_IP}\n[identity.ip]\ntrusted_proxies = [\"127.0.0.1\"]\n\n{}",
        ip_policy(2)
    );
    let proxy = Proxy::start(&[&upstream.addr], &config);
    let from = |xff: &str| {
        proxy
            .get("/", &[("x-forwarded-for", xff)])
            .status()
            .as_u16()
    };
    assert_eq!(from("2001:db8:1:2::1"), 200);
    assert_eq!(from("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), 200);
    assert_eq!(
        from("2001:db8:1:2::ffff"),
        429,
        "the third address of the same /64"
    );
    assert_eq!(from("2001:db8:1:3::1"), 200, "the next /64 is someone else");
}

#[test]
fn seed_004_one_sms_per_telephone_per_minute_on_the_captcha_route() {
    let upstream = Upstream::start();
    let config = "[[policy]]\nname = \"sms\"\ncapacity = 1\nrate = \"1/m\"\nsources = [\"query:telephone\"]\n\
                  match = { path_prefix = \"/sendCaptcha\", methods = [\"GET\", \"POST\"] }\n";
    let proxy = Proxy::start(&[&upstream.addr], config);
    assert_eq!(
        proxy
            .get("/sendCaptcha?telephone=13800000001", &[])
            .status(),
        200
    );
    let again = proxy.get("/sendCaptcha?telephone=13800000001", &[]);
    assert_eq!(again.status(), 429);
    let retry: u64 = again.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((55..=60).contains(&retry), "{retry}");
    assert_eq!(
        proxy
            .get("/sendCaptcha?telephone=13800000002", &[])
            .status(),
        200
    );
    for _ in 0..3 {
        assert_eq!(
            proxy.get("/other?telephone=13800000001", &[]).status(),
            200,
            "other routes are not limited"
        );
    }
    assert_eq!(proxy.metric(&requests_series("sms", "allowed")), 2.0);
}

#[test]
fn tiers_get_their_own_capacities() {
    let upstream = Upstream::start();
    let config = "[identity]\nsources = [\"header:x-api-key\"]\n\n\
                  [[policy]]\nname = \"plan\"\ncapacity = 1\nrate = \"1/h\"\ntier = \"header:x-plan\"\n\
                  [policy.tiers.free]\ncapacity = 2\nrate = \"1/h\"\n\
                  [policy.tiers.pro]\ncapacity = 5\nrate = \"1/h\"\n";
    let proxy = Proxy::start(&[&upstream.addr], config);
    let passes = |key: &str, plan: Option<&str>| {
        let mut headers = vec![("x-api-key", key)];
        if let Some(plan) = plan {
            headers.push(("x-plan", plan));
        }
        (0..8)
            .filter(|_| proxy.get("/", &headers).status() == 200)
            .count()
    };
    assert_eq!(passes("a", Some("free")), 2);
    assert_eq!(passes("b", Some("pro")), 5);
    assert_eq!(
        passes("c", Some("platinum")),
        1,
        "an unknown tier gets the policy's own limits"
    );
    assert_eq!(passes("d", None), 1);
    let resp = proxy.get("/", &[("x-api-key", "e"), ("x-plan", "pro")]);
    assert_eq!(resp.headers()["ratelimit-policy"], "\"plan\";q=5;w=18000");
}

#[test]
fn global_shadow_mode_lets_everything_through_and_counts() {
    let upstream = Upstream::start();
    let config = format!("{BY_IP}\n{}", ip_policy(2));
    let proxy = Proxy::start_with_server(&[&upstream.addr], "shadow = true", &config);
    for _ in 0..5 {
        assert_eq!(proxy.get("/", &[]).status(), 200);
    }
    assert_eq!(proxy.metric(&requests_series("per-ip", "allowed")), 2.0);
    assert_eq!(
        proxy.metric(&requests_series("per-ip", "shadow_throttled")),
        3.0
    );
}

#[test]
fn allow_and_deny_lists_work() {
    let upstream = Upstream::start();
    let config = "[identity]\nsources = [\"header:x-api-key\", \"ip\"]\n\n\
                  [access]\nallow = [\"header:x-api-key=partner\"]\ndeny = [\"header:x-api-key=banned\", \"cidr:192.0.2.0/24\"]\n\n\
                  [[policy]]\nname = \"p\"\ncapacity = 1\nrate = \"1/h\"\n";
    let proxy = Proxy::start(&[&upstream.addr], config);
    for _ in 0..5 {
        assert_eq!(
            proxy.get("/", &[("x-api-key", "partner")]).status(),
            200,
            "allow-listed: never limited"
        );
    }
    let denied = proxy.get("/", &[("x-api-key", "banned")]);
    assert_eq!(denied.status(), 403);
    assert_eq!(denied.headers()["content-type"], "application/problem+json");
    assert_eq!(proxy.get("/", &[("x-api-key", "other")]).status(), 200);
    assert_eq!(proxy.get("/", &[("x-api-key", "other")]).status(), 429);
    assert_eq!(proxy.metric("floodgate_access_total{list=\"allow\"}"), 5.0);
    assert_eq!(proxy.metric("floodgate_access_total{list=\"deny\"}"), 1.0);
}

#[test]
fn hostile_input_gets_documented_answers_and_no_worker_panics() {
    let upstream = Upstream::start();
    let table = format!("algorithms = [\"HS256\"]\nsecret = \"{SECRET}\"");
    let config = format!(
        "[identity]\nsources = [\"jwt:sub\", \"header:x-api-key\", \"ip\"]\n\n[identity.jwt]\n{table}\n\n\
         [[policy]]\nname = \"p\"\ncapacity = 1000\nrate = \"1000/s\"\n"
    );
    // Heads past the default 64 KiB get 431: let these 64 KiB values reach the identity chain.
    let server = "max_header_bytes = 262144";
    let proxy = Proxy::start_with_server(&[&upstream.addr], server, &config);
    let huge = "k".repeat(64 * 1024);
    // A 64 KiB key is not an identity: the caller falls back to its address.
    assert_eq!(proxy.get("/", &[("x-api-key", &huge)]).status(), 200);
    // A 64 KiB bearer token is garbage: 401.
    assert_eq!(
        proxy
            .get("/", &[("authorization", &format!("Bearer {huge}"))])
            .status(),
        401
    );
    for garbage in ["Bearer", "Bearer ", "Bearer ....", "Bearer e30.e30.e30"] {
        let status = proxy
            .get("/", &[("authorization", garbage)])
            .status()
            .as_u16();
        assert!(status == 200 || status == 401, "{garbage:?}: {status}");
    }
    // Non-UTF-8 values are hashed as bytes.
    let client = reqwest::blocking::Client::new();
    let binary = reqwest::header::HeaderValue::from_bytes(b"\xff\xfe\xfd").unwrap();
    let resp = client
        .get(proxy.url("/"))
        .header("x-api-key", binary.clone())
        .header("x-forwarded-for", binary)
        .send()
        .unwrap();
    assert_eq!(resp.status(), 200);
    for path in ["/?telephone=%ff%fe", "/%00", "/?a=%zz"] {
        assert!(proxy.get(path, &[]).status().as_u16() < 500, "{path}");
    }
    // The workers are all still serving.
    for _ in 0..10 {
        assert_eq!(proxy.get("/", &[("x-api-key", "fine")]).status(), 200);
    }
}

#[test]
fn refusals_fail_closed_deny_listed_and_forged_token_requests_never_reach_the_backend() {
    let upstream = Upstream::start();
    let table = format!("algorithms = [\"HS256\"]\nsecret = \"{SECRET}\"");
    let config = format!(
        "[identity]\nsources = [\"jwt:sub\", \"ip\"]\n\n[identity.jwt]\n{table}\n\n\
         [access]\ndeny = [\"header:x-api-key=banned\"]\n\n\
         [[policy]]\nname = \"p\"\ncapacity = 1000\nrate = \"1000/s\"\n"
    );
    let proxy = Proxy::start(&[&upstream.addr], &config);
    let forged = hs256(
        json!({ "sub": "mallory", "exp": 4_000_000_000u64 }),
        "not-the-secret",
    );
    for _ in 0..3 {
        assert_eq!(proxy.get("/", &[("x-api-key", "banned")]).status(), 403);
        let refused = proxy.get("/", &[("authorization", &bearer(&forged))]);
        assert_eq!(refused.status(), 401);
    }
    assert_eq!(
        upstream.served(),
        0,
        "no refused request reached the backend"
    );
    assert_eq!(proxy.get("/", &[]).status(), 200);
    assert_eq!(upstream.served(), 1);
}

mod tokens;
