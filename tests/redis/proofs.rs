//! Proven keys across a fleet: two instances sharing one real Redis agree on a key's proof
//! within a second (proven on one, its own caller on the other; revoked by an operator on one,
//! refused on the other), and the values are kept in Redis as digests only.

use crate::common;
use common::control_api::{admin_tables, control};
use common::keyed::Keyed;
use common::redis::RedisServer;
use common::wait::within;
use common::{client_from, Proxy};
use serde_json::json;
use std::time::Duration;

fn state_of(proxy: &Proxy, key: &str) -> String {
    let path = format!("/v1/keys?source=header:x-api-key&value={key}");
    let (code, body) = control(proxy, "GET", &path, None);
    assert_eq!(code, 200, "{body}");
    body["state"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn two_instances_on_one_redis_agree_on_a_proof_within_a_second() {
    let backend = Keyed::start(&["fleet-key"]);
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let admin = admin_tables(dir.path(), "");
    let config = format!(
        r#"
[store]
kind = "redis"
url = "{}"

[identity]
sources = ["header:x-api-key", "ip"]

[identity.verify]
"header:x-api-key" = {{ by = "backend", match = {{ path_prefix = "/api/" }} }}

[[policy]]
name = "per-caller"
capacity = 2
rate = "1/m"
"#,
        redis.url()
    );
    let a = Proxy::start_with_tables(&[&backend.addr], "", &admin, &config);
    let b = Proxy::start_with_tables(&[&backend.addr], "", &admin, &config);
    let client = client_from("127.0.2.1");
    let get = |proxy: &Proxy| {
        let response = client
            .get(proxy.url("/api/x"))
            .header("x-api-key", "fleet-key")
            .send();
        response.map(|r| r.status().as_u16()).unwrap_or(0)
    };
    // The key is proven on a (its proving request paid by the address); the address spends
    // the rest of its two on b.
    let anonymous = |proxy: &Proxy| {
        client
            .get(proxy.url("/public/x"))
            .send()
            .unwrap()
            .status()
            .as_u16()
    };
    assert_eq!(get(&a), 200);
    assert_eq!((anonymous(&b), anonymous(&b)), (200, 429));
    let seen = within(Duration::from_secs(1), || {
        state_of(&b, "fleet-key") == "proven"
    });
    assert!(
        seen.is_some(),
        "b learns a's proof within a second: {}",
        state_of(&b, "fleet-key")
    );
    eprintln!("b knew of a's proof {seen:?} later");
    assert_eq!(
        (get(&b), get(&b)),
        (200, 200),
        "its own two on b, from an exhausted address"
    );

    // An operator revokes it on b: a refuses it within a second.
    let body = json!({ "source": "header:x-api-key", "value": "fleet-key" });
    assert_eq!(control(&b, "POST", "/v1/keys/revoke", Some(body)).0, 200);
    let refused = within(Duration::from_secs(1), || {
        state_of(&a, "fleet-key") == "refused"
    });
    assert!(refused.is_some(), "a learns b's revocation within a second");

    // Redis keeps digests, never the value.
    let mut conn = redis.conn();
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut conn).unwrap();
    let proofs: Vec<&String> = keys.iter().filter(|k| k.contains("{proofs}")).collect();
    assert!(!proofs.is_empty(), "{keys:?}");
    for key in &proofs {
        let dump: Vec<u8> = redis::cmd("DUMP")
            .arg(key.as_str())
            .query(&mut conn)
            .unwrap();
        let text = String::from_utf8_lossy(&dump);
        assert!(!text.contains("fleet-key"), "{key} holds the raw value");
    }
}
