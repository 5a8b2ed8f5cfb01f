//! Issue 75 across a fleet: a decision made on one instance of a Redis fleet is explained by
//! another (`GET /v1/decisions/{ref}`, found on the fleet's shelf), and expires with
//! `decisions.max_age`.

use crate::common;

use common::control_api::{admin_tables, control, explained};
use common::redis::RedisServer;
use common::wait::within;
use common::{header, Proxy, Upstream, PER_USER};
use serde_json::Value;
use std::time::Duration;

const KEY: &str = "raw-api-key-of-bob";

#[test]
fn a_decision_made_on_one_instance_is_explained_by_another() {
    let upstream = Upstream::start();
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let admin = admin_tables(dir.path(), "");
    let config = format!(
        "[store]\nkind = \"redis\"\nurl = \"{}\"\n[decisions]\nmax_age = \"3s\"\n{PER_USER}",
        redis.url()
    );
    let one = Proxy::start_with_tables(&[&upstream.addr], "", &admin, &config);
    let two = Proxy::start_with_tables(&[&upstream.addr], "", &admin, &config);
    let mut last = None;
    for _ in 0..6 {
        last = Some(one.get("/items/1", &[("x-api-key", KEY)]));
    }
    let refused = last.unwrap();
    assert_eq!(refused.status(), 429);
    let id = header(&refused, "x-request-id");
    let body: Value = refused.json().unwrap();
    assert_eq!(body["ref"], id.as_str());

    let here = explained(&one, &id);
    assert_eq!(here["found_on"], "this instance");
    let there = explained(&two, &id);
    assert_eq!(there["found_on"], "fleet", "{there}");
    assert_eq!(there["decision"], "throttled");
    assert_eq!(
        there["instance"], here["instance"],
        "the instance that decided"
    );
    assert_eq!(there["identity"], here["identity"]);
    assert_eq!(there["bucket"], here["bucket"]);
    assert!(!there.to_string().contains(KEY), "{there}");

    // An allowed request on the second instance is explained by the first.
    let allowed = two.get("/ok", &[("x-api-key", "someone-else")]);
    assert_eq!(allowed.status(), 200);
    let id2 = header(&allowed, "x-request-id");
    let back = explained(&one, &id2);
    assert_eq!(
        (&back["decision"], &back["found_on"]),
        (&"allowed".into(), &"fleet".into())
    );

    // Issue #82: a client of the second instance that sends the first's ref as its own id
    // replaces nothing, in its ring or on the shelf.
    let attack = two.get(
        "/innocent",
        &[("x-request-id", &id), ("x-api-key", "attacker")],
    );
    assert_eq!(attack.status(), 200);
    // Records reach the shelf in the order they were kept: once a later one is there, the
    // attack's is too.
    let later = header(
        &two.get("/later", &[("x-api-key", "later")]),
        "x-request-id",
    );
    let shelf = |id: &str| -> Option<String> {
        redis::cmd("GET")
            .arg(format!("floodgate:{{decisions}}:{id}"))
            .query(&mut redis.conn())
            .expect("GET")
    };
    assert!(
        within(Duration::from_secs(3), || shelf(&later).is_some()).is_some(),
        "the later record reached the shelf"
    );
    let shelved = shelf(&id).expect("the victim's record on the shelf");
    assert!(shelved.contains("\"/items/1\""), "{shelved}");
    let there = explained(&two, &id);
    assert_eq!(
        (&there["found_on"], &there["path"]),
        (&"fleet".into(), &"/items/1".into()),
        "{there}"
    );

    // Past max_age, neither knows it.
    let path = format!("/v1/decisions/{id}");
    let gone = within(Duration::from_secs(6), || {
        control(&one, "GET", &path, None).0 == 404 && control(&two, "GET", &path, None).0 == 404
    });
    assert!(gone.is_some(), "forgotten after decisions.max_age");
}

#[test]
fn an_instance_writes_at_most_keep_records_to_redis_per_max_age_refusals_first() {
    let upstream = Upstream::start();
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let admin = admin_tables(dir.path(), "");
    let config = format!(
        "[store]\nkind = \"redis\"\nurl = \"{}\"\n[decisions]\nkeep = 10\n{PER_USER}",
        redis.url()
    );
    let proxy = Proxy::start_with_tables(&[&upstream.addr], "", &admin, &config);
    // 20 callers' first requests (allowed): only half the budget goes to them.
    for i in 0..20 {
        let key = format!("caller-{i}");
        assert_eq!(proxy.get("/a", &[("x-api-key", &key)]).status(), 200);
    }
    // Then refusals: they take the rest.
    let mut refused = Vec::new();
    for _ in 0..15 {
        let response = proxy.get("/a", &[("x-api-key", KEY)]);
        if response.status() == 429 {
            refused.push(header(&response, "x-request-id"));
        }
    }
    assert_eq!(refused.len(), 10);
    let keys = || -> Vec<String> {
        redis::cmd("KEYS")
            .arg("*{decisions}*")
            .query(&mut redis.conn())
            .unwrap()
    };
    let settled = within(Duration::from_secs(3), || keys().len() == 10);
    assert!(settled.is_some(), "{:?}", keys());
    // 5 allowed, 5 refused: the first 5 refusals are in Redis.
    let stored = keys().join(" ");
    let found = refused
        .iter()
        .filter(|id| stored.contains(id.as_str()))
        .count();
    assert_eq!(found, 5, "{stored}");
}
