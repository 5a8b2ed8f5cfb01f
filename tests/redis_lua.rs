//! The Lua script against its specification: the same (time, cost) sequences through
//! `lua/take.lua` in a real Redis and through `bucket.rs` (via the memory store's all-or-nothing
//! take) give the same answers, to the last bit of every fractional token.

mod common;

use common::redis::RedisServer;
use floodgate::config::{OnError, RedisSettings};
use floodgate::identity::Identity;
use floodgate::limiter::{Assessments, BucketSpec, MemoryStore, RedisStore, Take};
use floodgate::metrics::Metrics;
use std::time::Duration;

fn settings(url: String) -> RedisSettings {
    RedisSettings {
        url,
        nodes: Vec::new(),
        username: None,
        password: None,
        prefix: "difftest".into(),
        timeout: Duration::from_secs(2),
        on_error: OnError::Deny,
        breaker_failures: 100,
        breaker_probe_interval: Duration::from_millis(100),
        deny_cache_entries: 0,
        ttl_margin: Duration::from_millis(500),
        fallback_max_entries: 1000,
    }
}

/// A small deterministic generator (no dependency needed for a test sequence).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % below
    }
}

fn take(
    policy_id: u64,
    name: &'static str,
    who: &str,
    capacity: f64,
    rate: f64,
    cost: f64,
) -> Take<'static> {
    Take {
        policy_id,
        policy_name: name,
        identity: Identity::of("test", who.as_bytes()),
        spec: BucketSpec {
            capacity,
            rate_per_second: rate,
        },
        cost,
    }
}

#[test]
fn lua_and_bucket_rs_agree_on_the_same_sequences() {
    let redis = RedisServer::start();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let store = RedisStore::new(&settings(redis.url()), Metrics::new().store.clone()).unwrap();
    let spec_store = MemoryStore::new(1_000_000);
    let mut rng = Lcg(7);
    let (mut allowed, mut refused) = (0, 0);
    for step in 0..600 {
        let who = ["alice", "bob"][rng.next(2) as usize];
        // Fast refill rates make microsecond gaps matter; odd rates exercise fractions.
        let mut takes = vec![take(1, "fast", who, 5.0, 1733.0, 1.0 + rng.next(3) as f64)];
        if rng.next(2) == 0 {
            takes.push(take(2, "slow", who, 3.0, 97.3, 1.0 + rng.next(2) as f64));
        }
        let (now_us, from_lua) = runtime
            .block_on(store.call(&takes))
            .expect("script answers");
        let from_spec: Assessments = spec_store.acquire_at(&takes, now_us);
        assert_eq!(from_lua, from_spec, "step {step} at {now_us} µs: {takes:?}");
        if from_lua.iter().all(|a| a.allowed) {
            allowed += 1;
        } else {
            refused += 1;
        }
        if rng.next(4) == 0 {
            std::thread::sleep(Duration::from_micros(rng.next(3000)));
        }
    }
    assert!(
        allowed > 50 && refused > 50,
        "both outcomes exercised: {allowed} / {refused}"
    );
}

#[test]
fn keys_are_hash_tagged_by_a_digest_of_the_identity() {
    let store = RedisStore::new(
        &settings("redis://127.0.0.1:1".into()),
        Metrics::new().store.clone(),
    )
    .unwrap();
    let t = take(1, "per-user", "alice", 1.0, 1.0, 1.0);
    let key = store.key(&t);
    assert_eq!(key, format!("difftest:{{{}}}:per-user", t.identity.hex()));
    assert!(!key.contains("alice"));
}
