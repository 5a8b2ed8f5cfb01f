//! Tests of pool selection: rotation, passive ejection, the all-down fallback, retries within
//! a pool, consistent hashing, and pools kept across a reload.

use super::*;
use std::collections::BTreeSet;
use std::time::Duration;

fn settings(balance: Balance, backends: &[&str]) -> UpstreamSettings {
    let pool = PoolSettings {
        name: DEFAULT_POOL.to_owned(),
        backends: backends
            .iter()
            .map(|a| Backend {
                address: (*a).to_owned(),
                tls_name: None,
                h2c: false,
                weight: 1,
            })
            .collect(),
        balance,
        host: None,
        ca_file: None,
        health: HealthSettings {
            eject_after: 2,
            ..HealthSettings::default()
        },
    };
    UpstreamSettings {
        pools: vec![pool],
        routes: Vec::new(),
        ca_file: None,
        connect_timeout: Duration::from_secs(1),
        read_timeout: Duration::from_secs(1),
        write_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(3600),
        ja4_header: None,
        h2fp_header: None,
    }
}

const THREE: [&str; 3] = ["127.0.0.1:1001", "127.0.0.1:1002", "127.0.0.1:1003"];

/// The address one fresh request is sent to.
fn next(upstream: &Upstream, key: &[u8]) -> String {
    let mut attempts = Attempts::default();
    let peer = upstream.peer(&mut attempts, 0, key).unwrap();
    upstream.answered(&mut attempts, 200);
    peer._address.to_string()
}

/// A request to pool 0 whose answer from `slot` is awaited.
fn awaiting(slot: usize) -> Attempts {
    Attempts {
        pool: Some(0),
        tried: SmallVec::from_slice(&[slot]),
        current: Some(slot),
    }
}

#[test]
fn round_robin_visits_every_backend_and_ejection_skips_one() {
    let upstream = Upstream::resolve(&settings(Balance::RoundRobin, &THREE), None).unwrap();
    let seen: BTreeSet<String> = (0..6).map(|_| next(&upstream, b"")).collect();
    assert_eq!(seen.len(), 3);
    upstream.answered(&mut awaiting(1), 502);
    upstream.answered(&mut awaiting(1), 200);
    upstream.answered(&mut awaiting(1), 502);
    assert!(
        upstream.pools()[0].backends_up().iter().all(|(_, up)| *up),
        "not in a row"
    );
    upstream.failed(&mut awaiting(1));
    let up = upstream.pools()[0].backends_up();
    let down: Vec<&str> = up.iter().filter(|(_, up)| !up).map(|(b, _)| *b).collect();
    assert_eq!(down.len(), 1, "{up:?}");
    for _ in 0..6 {
        assert_ne!(next(&upstream, b""), down[0]);
    }
}

#[test]
fn when_every_backend_is_down_requests_still_go_somewhere() {
    let upstream = Upstream::resolve(&settings(Balance::RoundRobin, &THREE[..1]), None).unwrap();
    for _ in 0..2 {
        let mut attempts = Attempts::default();
        upstream.peer(&mut attempts, 0, b"").unwrap();
        upstream.failed(&mut attempts);
    }
    assert_eq!(upstream.pools_down(), [DEFAULT_POOL]);
    assert_eq!(next(&upstream, b""), THREE[0]);
}

#[test]
fn a_failed_connection_retries_each_other_backend_once() {
    let upstream = Upstream::resolve(&settings(Balance::Hash, &THREE), None).unwrap();
    let mut attempts = Attempts::default();
    let mut tried = BTreeSet::new();
    for _ in 0..3 {
        let peer = upstream.peer(&mut attempts, 0, b"caller").unwrap();
        assert!(tried.insert(peer._address.to_string()), "tried twice");
        upstream.failed(&mut attempts);
    }
    assert!(!upstream.may_retry(&attempts));
    assert!(upstream.peer(&mut attempts, 0, b"caller").is_err());
}

#[test]
fn a_retry_after_a_stale_reused_connection_may_use_the_same_backend() {
    let upstream = Upstream::resolve(&settings(Balance::RoundRobin, &THREE[..1]), None).unwrap();
    let mut attempts = Attempts::default();
    let first = upstream.peer(&mut attempts, 0, b"").unwrap();
    // No failure was counted: the backend closed a kept-alive connection.
    let again = upstream.peer(&mut attempts, 0, b"").unwrap();
    assert_eq!(first._address, again._address);
}

#[test]
fn hashing_keeps_a_key_on_one_backend() {
    let upstream = Upstream::resolve(&settings(Balance::Hash, &THREE), None).unwrap();
    let mut spread = BTreeSet::new();
    for key in 0u32..20 {
        let first = next(&upstream, &key.to_le_bytes());
        for _ in 0..5 {
            assert_eq!(next(&upstream, &key.to_le_bytes()), first);
        }
        spread.insert(first);
    }
    assert_eq!(spread.len(), 3);
}

#[test]
fn a_reload_keeps_unchanged_pools_and_rebuilds_changed_ones() {
    let old = Upstream::resolve(&settings(Balance::RoundRobin, &THREE), None).unwrap();
    let same = Upstream::resolve(&settings(Balance::RoundRobin, &THREE), Some(&old)).unwrap();
    assert!(Arc::ptr_eq(&old.pools()[0], &same.pools()[0]));
    let changed = Upstream::resolve(&settings(Balance::Hash, &THREE), Some(&old)).unwrap();
    assert!(!Arc::ptr_eq(&old.pools()[0], &changed.pools()[0]));
}
