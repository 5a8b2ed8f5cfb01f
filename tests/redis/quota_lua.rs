//! Calendar quotas in the Lua script against their specification: with periods of 40 ms that
//! a run crosses hundreds of times, and instances whose clocks run ahead of or behind Redis's,
//! `lua/take.lua` in a real Redis and `bucket.rs` (the memory store's take) give the same
//! answers to the last bit, and a quota's key expires at its period's end.

use crate::common;

use common::difftest::{settings, store, Lcg};
use common::redis::RedisServer;
use floodgate::identity::{Identity, IdentityKey};
use floodgate::limiter::{
    Assessments, BucketKey, BucketSpec, MemoryStore, Mode, Periods, PolicyKey, Take, Terms,
};
use std::sync::LazyLock;
use std::time::Duration;

/// A quota policy and a bucket policy.
static POLICIES: LazyLock<[PolicyKey; 2]> =
    LazyLock::new(|| ["quota", "bucket"].map(PolicyKey::new));

/// Each period's length, in microseconds.
const PERIOD: u64 = 40_000;

/// The periods around `clock` on a grid of [`PERIOD`].
fn periods_around(clock: u64) -> Periods {
    let k = clock / PERIOD;
    Periods::new([
        (k - 1) * PERIOD,
        k * PERIOD,
        (k + 1) * PERIOD,
        (k + 2) * PERIOD,
    ])
    .unwrap()
}

fn key(policy: usize, who: &str) -> BucketKey<'static> {
    BucketKey {
        policy: &POLICIES[policy],
        identity: Identity::of(&IdentityKey::from_bytes([1; 32]), "test", who.as_bytes()),
    }
}

fn quota_take(who: &str, capacity: f64, cost: f64, clock: u64) -> Take<'static> {
    Take {
        key: key(0, who),
        spec: BucketSpec::quota(capacity, periods_around(clock)).unwrap(),
        cost,
        mode: Mode::Enforce,
        terms: Terms::default(),
    }
}

fn redis_now(redis: &RedisServer) -> u64 {
    let (s, us): (u64, u64) = redis::cmd("TIME").query(&mut redis.conn()).unwrap();
    s * 1_000_000 + us
}

#[test]
fn lua_and_bucket_rs_agree_on_quotas_across_periods_and_skewed_clocks() {
    let redis = RedisServer::start();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let store = store(&settings(redis.url()));
    let spec_store = MemoryStore::new(1_000_000);
    let mut rng = Lcg(11);
    let mut now = redis_now(&redis);
    let (mut allowed, mut refused, mut periods_seen) = (0, 0, std::collections::HashSet::new());
    for step in 0..1200 {
        let who = ["alice", "bob"][rng.next(2) as usize];
        // The instance's clock: Redis's last reading, up to 15 ms off either way.
        let clock = now + rng.next(30_000) - 15_000;
        let block_us = [0, 0, 0, 25_000][rng.next(4) as usize];
        let mut takes = vec![Take {
            terms: Terms {
                overdraft: 0.0,
                block_us,
            },
            ..quota_take(who, 4.0, 1.0 + rng.next(2) as f64, clock)
        }];
        if rng.next(2) == 0 {
            takes.push(Take {
                key: key(1, who),
                spec: BucketSpec::new(3.0, 211.0).unwrap(),
                cost: 1.0,
                mode: Mode::Enforce,
                terms: Terms::default(),
            });
        }
        if rng.next(4) == 0 {
            takes[0].mode = Mode::Shadow;
        }
        // Now and then a settlement refunds or charges the quota instead.
        if rng.next(5) == 0 {
            let delta = rng.next(6) as f64 - 2.5;
            takes = vec![Take {
                mode: Mode::Settle,
                ..quota_take(who, 4.0, delta, clock)
            }];
        }
        let (at, from_lua) = runtime
            .block_on(store.call(&takes))
            .expect("script answers");
        now = at;
        let from_spec: Assessments = spec_store.acquire_at(&takes, at);
        assert_eq!(from_lua, from_spec, "step {step} at {at} µs: {takes:?}");
        periods_seen.insert(at / PERIOD);
        match from_lua[0].is_allowed() {
            true => allowed += 1,
            false => refused += 1,
        }
        if rng.next(3) == 0 {
            std::thread::sleep(Duration::from_micros(rng.next(6_000)));
        }
    }
    assert!(allowed > 100 && refused > 100, "{allowed} / {refused}");
    assert!(
        periods_seen.len() > 20,
        "{} periods crossed",
        periods_seen.len()
    );
}

#[test]
fn a_quota_key_expires_at_its_periods_end_plus_the_margin() {
    let redis = RedisServer::start();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let store = store(&settings(redis.url()));
    let now = redis_now(&redis);
    let end = now + 3_600_000_000;
    let periods = Periods::new([now - 7_200_000_000, now - 10, end, end + 3_600_000_000]).unwrap();
    let take = Take {
        key: key(0, "carol"),
        spec: BucketSpec::quota(50.0, periods).unwrap(),
        cost: 1.0,
        mode: Mode::Enforce,
        terms: Terms::default(),
    };
    let (_, answer) = runtime.block_on(store.call(&[take])).unwrap();
    assert!(answer[0].is_allowed());
    assert_eq!(answer[0].remaining(), 49.0);
    let expires_at_ms: u64 = redis::cmd("PEXPIRETIME")
        .arg(store.key(&take))
        .query(&mut redis.conn())
        .unwrap();
    assert_eq!(
        expires_at_ms,
        end.div_ceil(1000) + 500,
        "the period's end plus ttl_margin"
    );
}
