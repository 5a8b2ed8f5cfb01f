//! The Lua script against its specification: the same (time, cost) sequences through
//! `lua/take.lua` in a real Redis and through `bucket.rs` (via the memory store's all-or-nothing
//! take) give the same answers, to the last bit of every fractional token.

mod common;

use common::redis::RedisServer;
use floodgate::identity::{Identity, IdentityKey};
use floodgate::limiter::{
    Assessments, BucketKey, BucketSpec, MemoryStore, Mode, OnError, PolicyKey, RedisSettings,
    RedisStore, Take,
};
use floodgate::telemetry::Metrics;
use std::sync::LazyLock;
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

/// The policies of these tests, by position: `per-user`, `fast`, `slow`.
static POLICIES: LazyLock<[PolicyKey; 3]> =
    LazyLock::new(|| ["per-user", "fast", "slow"].map(PolicyKey::new));

fn take(policy: usize, who: &str, capacity: f64, rate: f64, cost: f64) -> Take<'static> {
    Take {
        key: BucketKey {
            policy: &POLICIES[policy],
            identity: Identity::of(&IdentityKey::from_bytes([0; 32]), "test", who.as_bytes()),
        },
        spec: BucketSpec::new(capacity, rate).unwrap(),
        cost,
        mode: Mode::Enforce,
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
        let mut takes = vec![take(1, who, 5.0, 1733.0, 1.0 + rng.next(3) as f64)];
        if rng.next(2) == 0 {
            takes.push(take(2, who, 3.0, 97.3, 1.0 + rng.next(2) as f64));
        }
        // A shadow bucket rides along now and then, decided on its own.
        if rng.next(3) == 0 {
            let shadow = take(0, who, 2.0, 31.7, 1.0);
            takes.push(Take {
                mode: Mode::Shadow,
                ..shadow
            });
        }
        let (now_us, from_lua) = runtime
            .block_on(store.call(&takes))
            .expect("script answers");
        let from_spec: Assessments = spec_store.acquire_at(&takes, now_us);
        assert_eq!(from_lua, from_spec, "step {step} at {now_us} µs: {takes:?}");
        if from_lua
            .iter()
            .zip(&takes)
            .all(|(a, t)| a.allowed || !t.enforces())
        {
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
    let t = take(0, "alice", 1.0, 1.0, 1.0);
    let key = store.key(&t);
    assert_eq!(
        key,
        format!("difftest:{{{}}}:per-user", t.key.identity.hex())
    );
    assert!(!key.contains("alice"));
}
