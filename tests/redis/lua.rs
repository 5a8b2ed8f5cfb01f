//! The Lua script against its specification: the same (time, cost) sequences through
//! `lua/take.lua` in a real Redis and through `bucket.rs` (via the memory store's all-or-nothing
//! take) give the same answers, to the last bit of every fractional token.

use crate::common;

use common::difftest::{settings, store, store_with, Lcg};
use common::redis::RedisServer;
use floodgate::identity::{Identity, IdentityKey};
use floodgate::limiter::bucket::{MAX_DEBT_SECONDS, MAX_REFILL_US};
use floodgate::limiter::{
    Assessments, BucketKey, BucketSpec, InFlight, MemoryStore, Mode, Penalty, PolicyKey,
    RedisSettings, RedisSlots, Take, Terms,
};
use floodgate::telemetry::Metrics;
use std::sync::LazyLock;
use std::time::Duration;

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
        terms: Terms::default(),
    }
}

/// Now and then an overdraft (prepayment), a penalty block of a few milliseconds, or both.
fn terms(rng: &mut Lcg) -> Terms {
    let overdraft = [0.0, 0.0, 0.75, 2.5][rng.next(4) as usize];
    let block_us = [0, 0, 0, 400 + rng.next(4000)][rng.next(4) as usize];
    Terms {
        overdraft,
        block_us,
    }
}

#[test]
fn lua_and_bucket_rs_agree_on_the_same_sequences() {
    let redis = RedisServer::start();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let store = store(&settings(redis.url()));
    let spec_store = MemoryStore::new(1_000_000);
    let mut rng = Lcg(7);
    let (mut allowed, mut refused, mut prepaid, mut blocks) = (0, 0, 0, 0);
    let mut deep_debts = 0;
    // 800 steps, and more (up to 2,400) until every outcome below has been seen often
    // enough: blocks and prepayments depend on the time between calls, which load stretches.
    let covered = |allowed, refused, prepaid, blocks, deep_debts| {
        allowed > 50 && refused > 50 && prepaid > 10 && blocks > 10 && deep_debts >= 8
    };
    for step in 0..2400 {
        if step >= 800 && covered(allowed, refused, prepaid, blocks, deep_debts) {
            break;
        }
        let who = ["alice", "bob"][rng.next(2) as usize];
        // Fast refill rates make microsecond gaps matter; odd rates exercise fractions.
        let mut takes = vec![Take {
            terms: terms(&mut rng),
            ..take(1, who, 5.0, 1733.0, 1.0 + rng.next(3) as f64)
        }];
        if rng.next(2) == 0 {
            takes.push(Take {
                terms: terms(&mut rng),
                ..take(2, who, 3.0, 97.3, 1.0 + rng.next(2) as f64)
            });
        }
        // A shadow bucket rides along now and then, decided on its own.
        if rng.next(3) == 0 {
            let shadow = take(0, who, 2.0, 31.7, 1.0);
            takes.push(Take {
                mode: Mode::Shadow,
                ..shadow
            });
        }
        // Now and then a settlement charges (into debt) or refunds the fast bucket instead.
        if rng.next(5) == 0 {
            let delta = rng.next(9) as f64 - 3.5;
            takes = vec![Take {
                mode: Mode::Settle,
                ..take(1, who, 5.0, 1733.0, delta)
            }];
        }
        let (now_us, from_lua) = runtime
            .block_on(store.call(&takes))
            .expect("script answers");
        let from_spec: Assessments = spec_store.acquire_at(&takes, now_us);
        assert_eq!(from_lua, from_spec, "step {step} at {now_us} µs: {takes:?}");
        prepaid += from_lua
            .iter()
            .filter(|a| a.is_allowed() && a.wait_us() > 0)
            .count();
        blocks += from_lua
            .iter()
            .filter(|a| a.penalty() == Penalty::Started)
            .count();
        if from_lua
            .iter()
            .zip(&takes)
            .all(|(a, t)| a.is_allowed() || !t.enforces())
        {
            allowed += 1;
        } else {
            refused += 1;
        }
        if step % 97 == 0 {
            deep_debts += deep_debt_step(&runtime, &store, &spec_store, step);
        }
        if rng.next(4) == 0 {
            std::thread::sleep(Duration::from_micros(rng.next(3000)));
        }
    }
    assert!(
        allowed > 50 && refused > 50,
        "both outcomes exercised: {allowed} / {refused}"
    );
    assert!(deep_debts >= 8, "deep debts exercised: {deep_debts}");
    assert!(
        prepaid > 10 && blocks > 10,
        "prepayments and blocks exercised: {prepaid} / {blocks}"
    );
}

/// A caller of its own charged far past the deepest debt a bucket may hold (ten years of
/// refill, `MAX_DEBT_SECONDS`), then asking for a token: the script and the specification stop
/// at the same floor and name the same ten-year wait. Returns 1 once the step has run.
fn deep_debt_step(
    runtime: &tokio::runtime::Runtime,
    store: &floodgate::limiter::RedisStore,
    spec_store: &MemoryStore,
    step: usize,
) -> usize {
    let debtor = format!("debtor-{step}");
    let charge = Take {
        mode: Mode::Settle,
        ..take(1, &debtor, 5.0, 1733.0, 1e18)
    };
    let ask = take(1, &debtor, 5.0, 1733.0, 1.0);
    let mut answer = Assessments::new();
    for t in [charge, ask] {
        let (now_us, from_lua) = runtime.block_on(store.call(&[t])).expect("script answers");
        let from_spec: Assessments = spec_store.acquire_at(&[t], now_us);
        assert_eq!(from_lua, from_spec, "deep debt at step {step}: {t:?}");
        answer = from_lua;
    }
    // At the floor, plus what the few milliseconds between the two calls refilled.
    let floor = -(1733.0 * MAX_DEBT_SECONDS);
    assert!(
        (floor..floor + 1e6).contains(&answer[0].remaining()),
        "the debt stops at its floor: {answer:?}"
    );
    let years = answer[0].wait_us() as f64 / MAX_REFILL_US;
    assert!(
        !answer[0].is_allowed() && (0.99..=1.001).contains(&years),
        "refused for about ten years: {answer:?}"
    );
    1
}

#[test]
fn keys_are_hash_tagged_by_a_digest_of_the_identity() {
    let store = store(&settings("redis://127.0.0.1:1".into()));
    let t = take(0, "alice", 1.0, 1.0, 1.0);
    let key = store.key(&t);
    assert_eq!(
        key,
        format!("difftest:{{{}}}:per-user", t.key.identity.hex())
    );
    assert!(!key.contains("alice"));
}

#[test]
fn concurrent_decisions_are_batched_into_few_calls_and_stay_exact() {
    let redis = RedisServer::start();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let metrics = Metrics::new();
    let store = store_with(&settings(redis.url()), &metrics);
    // 400 decisions at once: 40 callers × 10 requests, each caller's bucket holds 7 tokens
    // and (almost) never refills, so exactly 7 of each caller's 10 pass however they batch.
    let takes: Vec<Take<'static>> = (0..400)
        .map(|i| take(1, &format!("caller-{}", i % 40), 7.0, 1e-6, 1.0))
        .collect();
    let answers = runtime.block_on(futures::future::join_all(
        takes.iter().map(|t| store.call(std::slice::from_ref(t))),
    ));
    let allowed = answers
        .iter()
        .filter(|a| a.as_ref().expect("answered").1[0].is_allowed())
        .count();
    assert_eq!(allowed, 40 * 7);
    let calls = metrics.store.call_seconds.get_sample_count();
    eprintln!("400 decisions in {calls} script calls");
    assert!(
        calls < 400,
        "decisions arriving together share calls: {calls}"
    );
}

#[test]
fn a_bucket_written_before_penalties_existed_is_read_as_unblocked() {
    let redis = RedisServer::start();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let store = store(&settings(redis.url()));
    let t = take(0, "old", 5.0, 1e-6, 1.0);
    let mut conn = redis.conn();
    let (seconds, micros): (u64, u64) = redis::cmd("TIME").query(&mut conn).unwrap();
    let now_us = (seconds * 1_000_000 + micros) as f64;
    // The two-double string of earlier versions: 2 tokens, no block.
    let old = [2.0f64.to_le_bytes(), now_us.to_le_bytes()].concat();
    let _: () = redis::cmd("SET")
        .arg(store.key(&t))
        .arg(old)
        .query(&mut conn)
        .unwrap();
    let (_, answer) = runtime.block_on(store.call(&[t])).unwrap();
    assert!(answer[0].is_allowed());
    assert!((answer[0].remaining() - 1.0).abs() < 1e-3, "{answer:?}");
    let stored: Vec<u8> = redis::cmd("GET")
        .arg(store.key(&t))
        .query(&mut conn)
        .unwrap();
    assert_eq!(stored.len(), 24, "written back as three doubles");
}

#[test]
fn concurrency_leases_follow_the_contract_of_inflight_lua() {
    let redis = RedisServer::start();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let settings = RedisSettings {
        in_flight_lease: Duration::from_millis(300),
        ..settings(redis.url())
    };
    let store = store(&settings);
    let slots = RedisSlots::new(store.driver(), settings.in_flight_lease);
    let key = take(0, "alice", 1.0, 1.0, 1.0).key;
    let set = slots.key(key.policy, &key.identity);
    assert_eq!(
        set,
        format!("difftest:{{{}}}:per-user:in-flight", key.identity.hex())
    );
    runtime.block_on(async {
        let first = slots.acquire(key, 2).await.unwrap().expect("a first slot");
        let second = slots.acquire(key, 2).await.unwrap().expect("a second slot");
        assert!(
            slots.acquire(key, 2).await.unwrap().is_none(),
            "the limit holds"
        );
        first.release().await;
        let third = slots
            .acquire(key, 2)
            .await
            .unwrap()
            .expect("a released slot is free");
        // A live holder renews its leases: after three leases both slots are still held.
        tokio::time::sleep(Duration::from_millis(900)).await;
        let other_instance = RedisSlots::new(store.driver(), settings.in_flight_lease);
        assert!(
            other_instance.acquire(key, 2).await.unwrap().is_none(),
            "renewed leases still count"
        );
        // A holder that dies never releases nor renews: its leases end by themselves.
        std::mem::forget(second);
        std::mem::forget(third);
        drop(slots);
        tokio::time::sleep(Duration::from_millis(450)).await;
        let after = other_instance.acquire(key, 2).await.unwrap();
        assert!(after.is_some(), "expired leases are given back");
        after.expect("a slot").release().await;
        assert_eq!(other_instance.held(), 0, "a released slot is not renewed");
    });
    let mut conn = redis.conn();
    let ttl: i64 = redis::cmd("PTTL").arg(&set).query(&mut conn).unwrap();
    assert!(ttl <= 300, "the set expires with its last lease: {ttl} ms");
}

#[test]
fn a_renewal_extends_only_the_leases_still_held() {
    let redis = RedisServer::start();
    let mut conn = redis.conn();
    let script = redis::Script::new(floodgate::limiter::driver::INFLIGHT_SCRIPT);
    let (a, b) = ("t:{a}:p:in-flight", "t:{a}:q:in-flight");
    let run = |conn: &mut redis::Connection, keys: &[&str], args: &[&str]| -> redis::Value {
        let mut call = script.prepare_invoke();
        keys.iter().for_each(|k| {
            call.key(*k);
        });
        args.iter().for_each(|a| {
            call.arg(*a);
        });
        call.invoke(conn).unwrap()
    };
    for (set, slot) in [(a, "i-1"), (a, "i-2"), (b, "i-3")] {
        run(&mut conn, &[set], &["acquire", slot, "5", "200"]);
    }
    run(&mut conn, &[a], &["release", "i-2"]);
    let answer = run(
        &mut conn,
        &[a, b],
        &["renew", "60000", "2", "i-1", "i-2", "1", "i-3"],
    );
    let (renewed, gone): (i64, Vec<String>) = redis::from_redis_value(answer).unwrap();
    assert_eq!((renewed, gone), (2, vec!["i-2".to_owned()]));
    let held: Vec<String> = redis::cmd("ZRANGE")
        .arg(a)
        .arg(0)
        .arg(-1)
        .query(&mut conn)
        .unwrap();
    assert_eq!(held, ["i-1"], "a released slot is not brought back");
    for set in [a, b] {
        let ttl: i64 = redis::cmd("PTTL").arg(set).query(&mut conn).unwrap();
        assert!(
            ttl > 59_000,
            "the set expires with its renewed lease: {ttl} ms"
        );
    }
    std::thread::sleep(Duration::from_millis(250));
    let answer = run(&mut conn, &[a], &["acquire", "j-1", "2", "200"]);
    let (taken, held): (i64, i64) = redis::from_redis_value(answer).unwrap();
    assert_eq!(
        (taken, held),
        (1, 2),
        "the renewed lease outlives its first term"
    );
}
