//! Bearer tokens, end to end: forged, expired, `none` and wrong-key tokens are refused (or
//! fall back to the address when configured so), and public keys and JWKS verify without
//! algorithm confusion.

use super::{bearer, fixture, hs256, jwt_config, now, SECRET};
use crate::common::{Proxy, Upstream};
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use serde_json::json;

#[test]
fn forged_expired_none_and_wrong_key_tokens_are_refused_401() {
    let upstream = Upstream::start();
    let table = format!("algorithms = [\"HS256\"]\nsecret = \"{SECRET}\"\nissuer = \"auth\"");
    let proxy = Proxy::start(&[&upstream.addr], &jwt_config(&table, "reject", 2));
    let good = |sub: &str| {
        hs256(
            json!({"sub": sub, "iss": "auth", "exp": now() + 300}),
            SECRET,
        )
    };
    for _ in 0..2 {
        assert_eq!(
            proxy
                .get("/", &[("authorization", &bearer(&good("alice")))])
                .status(),
            200
        );
    }
    assert_eq!(
        proxy
            .get("/", &[("authorization", &bearer(&good("alice")))])
            .status(),
        429
    );
    let attempts = [
        hs256(json!({"sub": "mallory", "iss": "auth", "exp": now() + 300}), "a-guessed-secret-of-some-length"),
        hs256(json!({"sub": "mallory", "iss": "auth", "exp": now() - 300}), SECRET),
        hs256(json!({"sub": "mallory", "iss": "other", "exp": now() + 300}), SECRET),
        // {"alg":"none"} . {"sub":"mallory","iss":"auth","exp":9999999999} . (no signature)
        "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJtYWxsb3J5IiwiaXNzIjoiYXV0aCIsImV4cCI6OTk5OTk5OTk5OX0.".into(),
        "garbage".into(),
        "a.b.c".into(),
    ];
    for token in &attempts {
        let resp = proxy.get("/", &[("authorization", &bearer(token))]);
        assert_eq!(resp.status(), 401, "{token}");
        assert!(resp.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("invalid_token"));
    }
    assert_eq!(upstream.served(), 2, "no refused token reached the backend");
    assert_eq!(
        proxy.metric("floodgate_invalid_tokens_total"),
        attempts.len() as f64
    );
    // Without a token the caller is its address: not alice's bucket, and not a free pass.
    assert_eq!(proxy.get("/", &[]).status(), 200);
}

#[test]
fn with_on_invalid_token_next_a_bad_token_falls_back_to_the_address() {
    let upstream = Upstream::start();
    let table = format!("algorithms = [\"HS256\"]\nsecret = \"{SECRET}\"");
    let proxy = Proxy::start(&[&upstream.addr], &jwt_config(&table, "next", 2));
    // Each forged token claims a new subject; all of them land in the one address bucket.
    let statuses: Vec<u16> = (0..5)
        .map(|i| {
            let forged = hs256(
                json!({"sub": format!("user{i}"), "exp": now() + 300}),
                "wrong-secret-wrong-secret",
            );
            proxy
                .get("/", &[("authorization", &bearer(&forged))])
                .status()
                .as_u16()
        })
        .collect();
    assert_eq!(statuses, [200, 200, 429, 429, 429]);
}

#[test]
fn public_keys_and_jwks_verify_and_algorithm_confusion_is_refused() {
    let upstream = Upstream::start();
    let claims = json!({"sub": "svc", "exp": now() + 300});
    let read = |name: &str| std::fs::read(fixture(name)).unwrap();
    let sign = |header: Header, key: EncodingKey| encode(&header, &claims, &key).unwrap();
    let rs256 = sign(
        Header::new(Algorithm::RS256),
        EncodingKey::from_rsa_pem(&read("rsa-private.pem")).unwrap(),
    );
    // The classic confusion attack: HMAC-sign with the RSA public key as the secret.
    let confused = sign(
        Header::new(Algorithm::HS256),
        EncodingKey::from_secret(&read("rsa-public.pem")),
    );
    let mut kid_header = Header::new(Algorithm::RS256);
    kid_header.kid = Some("test-rsa".into());
    let with_kid = sign(
        kid_header,
        EncodingKey::from_rsa_pem(&read("rsa-private.pem")).unwrap(),
    );
    let eddsa = sign(
        Header::new(Algorithm::EdDSA),
        EncodingKey::from_ed_pem(&read("ed25519-private.pem")).unwrap(),
    );
    let es256 = sign(
        Header::new(Algorithm::ES256),
        EncodingKey::from_ec_pem(&read("ec-private.pem")).unwrap(),
    );

    // (the [identity.jwt] keys, a token it accepts, tokens it refuses)
    let cases = [
        (
            format!(
                "algorithms = [\"RS256\"]\npublic_key_file = \"{}\"",
                fixture("rsa-public.pem")
            ),
            &rs256,
            vec![&confused],
        ),
        (
            format!(
                "algorithms = [\"RS256\", \"HS256\"]\njwks_file = \"{}\"",
                fixture("jwks.json")
            ),
            &with_kid,
            vec![&confused],
        ),
        (
            format!(
                "algorithms = [\"EdDSA\"]\npublic_key_file = \"{}\"",
                fixture("ed25519-public.pem")
            ),
            &eddsa,
            vec![&rs256],
        ),
        (
            format!(
                "algorithms = [\"ES256\"]\npublic_key_file = \"{}\"",
                fixture("ec-public.pem")
            ),
            &es256,
            vec![&eddsa],
        ),
    ];
    for (keys, accepted, refused) in cases {
        let proxy = Proxy::start(&[&upstream.addr], &jwt_config(&keys, "reject", 10));
        let status = |token: &str| {
            proxy
                .get("/", &[("authorization", &bearer(token))])
                .status()
                .as_u16()
        };
        assert_eq!(status(accepted), 200, "{keys}");
        for token in refused {
            assert_eq!(status(token), 401, "{keys}");
        }
    }
}

/// Issue 82: `match.headers` only sees that a token is sent. A `classify` policy giving
/// priority to `Authorization` gives it to a forged token too (under the `shed` switch it is
/// served while a caller without one is shed); overload.md's recipe puts the priority on a
/// policy whose sources read the token, and the forged one gets 401.
#[test]
fn a_classify_policy_verifies_no_token_and_the_books_recipe_does() {
    use crate::common::control_api::{admin_tables, control};
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let forged = hs256(
        json!({"sub": "mallory", "exp": now() + 300}),
        "a-guessed-secret-of-some-length",
    );
    let good = hs256(json!({"sub": "alice", "exp": now() + 300}), SECRET);
    let jwt = format!("[identity.jwt]\nalgorithms = [\"HS256\"]\nsecret = \"{SECRET}\"\n");
    let everyone = "[overload]\nmax_in_flight = 8\n\n[[policy]]\nname = \"everyone\"\n\
                    match = { path_prefix = \"/\" }\npriority = \"low\"\n";
    for (signed_in, forged_status) in [
        // A classify policy alone: the forged token earns `high` and is served.
        ("priority = \"high\"\n", 200),
        // The recipe: the same priority on a policy whose chain reads `jwt:sub`.
        (
            "priority = \"high\"\ncapacity = 600\nrate = \"10/s\"\nsources = [\"jwt:sub\"]\n",
            401,
        ),
    ] {
        let config = format!(
            "{jwt}\n{everyone}\n[[policy]]\nname = \"signed-in\"\n\
             match = {{ headers = {{ authorization = true }} }}\n{signed_in}"
        );
        let admin = admin_tables(dir.path(), "");
        let proxy = Proxy::start_with_tables(&[&upstream.addr], "", &admin, &config);
        let shed = json!({"level": "shed", "ttl": "1m"});
        assert_eq!(control(&proxy, "PUT", "/v1/overload", Some(shed)).0, 200);
        assert_eq!(proxy.get("/", &[]).status(), 503, "no token: low, shed");
        let with = |token: &str| {
            proxy
                .get("/", &[("authorization", &bearer(token))])
                .status()
        };
        assert_eq!(with(&good), 200, "{signed_in}");
        assert_eq!(with(&forged), forged_status, "{signed_in}");
    }
}
