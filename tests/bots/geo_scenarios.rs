//! Networks and countries end to end: databases written by mmdb-writer, the real binary, and
//! curl leaving from 127.0.x.y addresses.

use super::curl::{curl, Curl};
use crate::common::geo::{write_asn_db, write_country_db};
use crate::common::{Proxy, Upstream};

#[test]
fn thirty_addresses_of_one_asn_share_one_bucket() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let db = write_asn_db(dir.path(), &[("127.0.1.0/24", 64500)]);
    let config = format!(
        r#"
[geo]
asn_db = "{}"

[[policy]]
name = "per-network"
capacity = 20
rate = "1/h"
sources = ["asn", "ip"]
"#,
        db.display()
    );
    let proxy = Proxy::start(&[&upstream.addr], &config);
    let url = proxy.url("/");
    let statuses: Vec<u16> = (1..=30)
        .map(|i| curl(&Curl::get(&url).from(&format!("127.0.1.{i}"))).status)
        .collect();
    let admitted = statuses.iter().filter(|s| **s == 200).count();
    assert_eq!(admitted, 20, "one bucket for AS64500: {statuses:?}");
    assert!(statuses[20..].iter().all(|s| *s == 429), "{statuses:?}");
    // An address outside the database falls back to its own bucket.
    assert_eq!(curl(&Curl::get(&url).from("127.0.2.1")).status, 200);
}

#[test]
fn a_country_rule_in_shadow_mode_lets_everything_through_and_counts_it() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let db = write_country_db(dir.path(), &[("127.0.3.0/24", "NL")]);
    let config = format!(
        r#"
[geo]
country_db = "{}"

[[policy]]
name = "no-nl"
action = "deny"
shadow = true
match = {{ country = ["NL"] }}
"#,
        db.display()
    );
    let proxy = Proxy::start(&[&upstream.addr], &config);
    let url = proxy.url("/");
    for i in 1..=5 {
        assert_eq!(
            curl(&Curl::get(&url).from(&format!("127.0.3.{i}"))).status,
            200
        );
    }
    assert_eq!(curl(&Curl::get(&url).from("127.0.4.1")).status, 200);
    let shadow = r#"floodgate_requests_total{decision="shadow_denied",policy="no-nl"}"#;
    assert_eq!(proxy.metric(shadow), 5.0, "the five Dutch requests counted");
    let denied = r#"floodgate_requests_total{decision="denied",policy="no-nl"}"#;
    assert_eq!(proxy.metric(denied), 0.0);
}
