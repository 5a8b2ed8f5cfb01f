//! Keys a client cannot invent (`[identity.verify]`), end to end with the real binary and a
//! backend that knows three keys under `/api/` (401 for any other) and answers anyone under
//! `/public/`: invented keys share their address's bucket, a proven key gets its own from any
//! address, a key the backend stops accepting is demoted on its next refusal, and a key sent
//! beside another credential, twice, or spelt with underscores proves nothing.

use crate::common::control_api::{admin_tables, control};
use crate::common::keyed::Keyed;
use crate::common::{client_from, Proxy};
use reqwest::blocking::Client;
use serde_json::Value;

const KEYS: [&str; 3] = ["key-a", "key-b", "key-c"];

/// Five requests a minute per caller: a key's, or its address's without a proven key.
fn config(verify: &str) -> String {
    format!(
        r#"
[identity]
sources = ["header:x-api-key", "ip"]

[identity.verify]
"header:x-api-key" = {{ by = "backend", match = {{ path_prefix = "/api/" }}{verify} }}

[[policy]]
name = "per-caller"
capacity = 5
rate = "1/m"
"#
    )
}

fn start(backend: &Keyed, verify: &str) -> (Proxy, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let proxy = Proxy::start_with_tables(
        &[&backend.addr],
        "access_log = true",
        &admin_tables(dir.path(), ""),
        &config(verify),
    );
    (proxy, dir)
}

/// The status of GET `path` from `client` with `headers`.
fn status(proxy: &Proxy, client: &Client, path: &str, headers: &[(&str, &str)]) -> u16 {
    let mut req = client.get(proxy.url(path));
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    req.send().map(|r| r.status().as_u16()).unwrap_or(0)
}

/// What `proxy` knows of `key` (`GET /v1/keys`).
fn state_of(proxy: &Proxy, key: &str) -> Value {
    let path = format!("/v1/keys?source=header:x-api-key&value={key}");
    let (code, body) = control(proxy, "GET", &path, None);
    assert_eq!(code, 200, "{body}");
    body["state"].clone()
}

#[test]
fn invented_keys_share_their_address_bucket_and_a_proven_key_gets_its_own() {
    let backend = Keyed::start(&KEYS);
    let (proxy, _dir) = start(&backend, "");
    let attacker = client_from("127.0.0.2");
    let statuses: Vec<u16> = (0..200)
        .map(|i| {
            status(
                &proxy,
                &attacker,
                "/api/items",
                &[("x-api-key", &format!("made-up-{i}"))],
            )
        })
        .collect();
    let reached = backend.reached();
    assert!(
        reached <= 5,
        "{reached} of 200 invented keys reached the backend: {statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 429).count(),
        200 - reached
    );
    assert_eq!(
        state_of(&proxy, "made-up-0"),
        "unproven",
        "a 401 of an unknown value is not kept"
    );

    // A customer proves key-a from its own address; then the key is its own caller anywhere,
    // the attacker's exhausted address too.
    let customer = client_from("127.0.0.3");
    assert_eq!(
        status(&proxy, &customer, "/api/items", &[("x-api-key", "key-a")]),
        200
    );
    assert_eq!(state_of(&proxy, "key-a"), "proven");
    // (Its proving request was charged to the customer's address: the key's five are whole.)
    for _ in 0..5 {
        assert_eq!(
            status(&proxy, &attacker, "/api/items", &[("x-api-key", "key-a")]),
            200
        );
    }
    assert_eq!(
        status(&proxy, &attacker, "/api/items", &[("x-api-key", "key-a")]),
        429,
        "key-a's own five"
    );

    // The public route answers anyone: it proves nothing.
    let visitor = client_from("127.0.0.4");
    assert_eq!(
        status(
            &proxy,
            &visitor,
            "/public/page",
            &[("x-api-key", "made-up-public")]
        ),
        200
    );
    assert_eq!(state_of(&proxy, "made-up-public"), "unproven");

    // The backend takes key-b back after proving it: its next refusal demotes it.
    let other = client_from("127.0.0.5");
    assert_eq!(
        status(&proxy, &other, "/api/items", &[("x-api-key", "key-b")]),
        200
    );
    assert_eq!(state_of(&proxy, "key-b"), "proven");
    backend.revoke("key-b");
    assert_eq!(
        status(&proxy, &other, "/api/items", &[("x-api-key", "key-b")]),
        401
    );
    assert_eq!(state_of(&proxy, "key-b"), "refused");
    // Refused, it names no one: the address's bucket pays (and the backend refuses it again).
    assert_eq!(
        status(&proxy, &other, "/api/items", &[("x-api-key", "key-b")]),
        401
    );

    let metrics = proxy.admin("/metrics").unwrap().text().unwrap();
    for state in ["proven", "unproven", "refused"] {
        let series = format!(
            "floodgate_identity_proof_total{{source=\"header:x-api-key\",state=\"{state}\"}}"
        );
        assert!(
            crate::common::series_value(&metrics, &series) >= 1.0,
            "{series}"
        );
    }
    let log = proxy.log();
    assert!(
        log.contains("proof=proven") && log.contains("proof=unproven"),
        "{log}"
    );
}

#[test]
fn laundering_a_key_through_another_credential_proves_nothing() {
    let backend = Keyed::start(&KEYS);
    let (proxy, _dir) = start(&backend, ", proof_header = \"x-key-proof\"");
    let client = client_from("127.0.0.6");
    // Beside an Authorization the backend accepts: the 200 is the token's, not the key's.
    let beside_token = [("x-api-key", "laundered"), ("authorization", "Bearer good")];
    assert_eq!(status(&proxy, &client, "/api/items", &beside_token), 200);
    assert_eq!(state_of(&proxy, "laundered"), "unproven");
    // Two lines of the header, or its underscore spelling beside it: 400, nothing learned.
    let twice = client
        .get(proxy.url("/api/items"))
        .header("x-api-key", "key-c")
        .header("x-api-key", "twice")
        .send()
        .unwrap();
    assert_eq!(twice.status(), 400);
    let underscored = client
        .get(proxy.url("/api/items"))
        .header("x-api-key", "key-c")
        .header("x_api_key", "spelt")
        .send()
        .unwrap();
    assert_eq!(underscored.status(), 400);
    let body: Value = underscored.json().unwrap();
    assert_eq!(body["source"], "header:x-api-key", "{body}");
    assert_eq!(state_of(&proxy, "twice"), "unproven");
    assert_eq!(state_of(&proxy, "spelt"), "unproven");
    assert_eq!(
        state_of(&proxy, "key-c"),
        "unproven",
        "no request of it reached the backend"
    );

    // The backend's word in `x-key-proof` wins over its 200, and never reaches the client.
    let said = client
        .get(proxy.url("/api/items?say_proof=1"))
        .header("x-api-key", "made-up")
        .send()
        .unwrap();
    assert_eq!(said.status(), 200);
    assert!(
        said.headers().get("x-key-proof").is_none(),
        "the proof header is stripped"
    );
    assert_eq!(state_of(&proxy, "made-up"), "unproven");
    let valid = client
        .get(proxy.url("/api/items?say_proof=1"))
        .header("x-api-key", "key-c")
        .send()
        .unwrap();
    assert!(valid.headers().get("x-key-proof").is_none());
    assert_eq!(state_of(&proxy, "key-c"), "proven");
}

#[test]
fn a_revoked_key_is_refused_at_the_edge_under_reject_and_operators_revoke_and_forget() {
    let backend = Keyed::start(&KEYS);
    let (proxy, _dir) = start(&backend, ", refused = \"reject\"");
    let client = client_from("127.0.0.7");
    assert_eq!(
        status(&proxy, &client, "/api/items", &[("x-api-key", "key-a")]),
        200
    );
    let body = serde_json::json!({ "source": "header:x-api-key", "value": "key-a" });
    let (code, answer) = control(&proxy, "POST", "/v1/keys/revoke", Some(body));
    assert_eq!(
        (code, &answer["state"]),
        (200, &Value::from("refused")),
        "{answer}"
    );
    assert!(
        answer.to_string().find("key-a").is_none(),
        "the raw value is never returned"
    );
    // The first request of a revoked key in an hour still reaches the backend (a mistake
    // heals: here the backend still accepts it, which proves it again).
    let reached = backend.reached();
    assert_eq!(
        status(&proxy, &client, "/api/items", &[("x-api-key", "key-a")]),
        200
    );
    assert_eq!(backend.reached(), reached + 1);
    assert_eq!(state_of(&proxy, "key-a"), "proven", "healed");
    // Taken back by the backend and refused: 403 at the edge, of its own type, with a ref.
    backend.revoke("key-a");
    assert_eq!(
        status(&proxy, &client, "/api/items", &[("x-api-key", "key-a")]),
        401
    );
    assert_eq!(
        status(&proxy, &client, "/api/items", &[("x-api-key", "key-a")]),
        401,
        "the hour's one request"
    );
    let refused = client
        .get(proxy.url("/api/items"))
        .header("x-api-key", "key-a")
        .send()
        .unwrap();
    assert_eq!(refused.status(), 403);
    let problem: Value = refused.json().unwrap();
    assert_eq!(
        problem["type"], "urn:floodgate:problem:key-refused",
        "{problem}"
    );
    assert!(problem["ref"].is_string(), "{problem}");
    // Forgotten: unproven again, its requests go on as the address's.
    let path = "/v1/keys?source=header:x-api-key&value=key-a";
    let (code, answer) = control(&proxy, "DELETE", path, None);
    assert_eq!(
        (code, &answer["forgotten"]),
        (200, &Value::from(true)),
        "{answer}"
    );
    assert_eq!(state_of(&proxy, "key-a"), "unproven");
    // A bad call names its field and changes nothing.
    let (code, answer) = control(
        &proxy,
        "GET",
        "/v1/keys?source=header:x-other&value=a",
        None,
    );
    assert_eq!(
        (code, &answer["field"]),
        (404, &Value::from("source")),
        "{answer}"
    );
}

#[test]
fn a_key_list_proves_its_keys_and_a_reload_reads_it_again() {
    use std::os::unix::fs::PermissionsExt;
    let backend = Keyed::start(&[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let keys = dir.path().join("keys.txt");
    std::fs::write(&keys, "# customers\nlisted-1\n").unwrap();
    std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o600)).unwrap();
    let extra = format!(
        r#"
[identity]
sources = ["cookie:session", "ip"]

[identity.verify]
"cookie:session" = {{ by = "list", file = "{}" }}

[[policy]]
name = "per-caller"
capacity = 2
rate = "1/m"
"#,
        keys.display()
    );
    let proxy =
        Proxy::start_with_tables(&[&backend.addr], "", &admin_tables(dir.path(), ""), &extra);
    let client = client_from("127.0.0.8");
    let get = |session: &str| status(&proxy, &client, "/public/x", &[("cookie", session)]);
    // An unlisted session shares the address's two; a listed one has its own two.
    assert_eq!((get("session=nobody"), get("session=nobody-2")), (200, 200));
    assert_eq!(get("session=nobody-3"), 429);
    assert_eq!(
        (get("session=listed-1"), get("session=listed-1")),
        (200, 200)
    );
    std::fs::write(
        &keys,
        "sha256:0000000000000000000000000000000000000000000000000000000000000000\n",
    )
    .unwrap();
    proxy.reload("success");
    assert_eq!(
        get("session=listed-1"),
        429,
        "no longer listed: the address's bucket"
    );
}
