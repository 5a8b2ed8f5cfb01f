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
