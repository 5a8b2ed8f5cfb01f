//! The memory store: all-or-nothing takes, sweeping, the cap, and eviction's two rules.

use super::shard::{Caller, SWEEP_INTERVAL_US};
use super::*;
use crate::bucket::MAX_REFILL_US;
use crate::{BucketKey, BucketSpec, Mode, PolicyKey, Terms};
use crate::{Identity, IdentityKey};
use std::sync::LazyLock;

const SECOND: u64 = 1_000_000;

static POLICIES: LazyLock<[PolicyKey; 3]> =
    LazyLock::new(|| ["p0", "p1", "p2"].map(PolicyKey::new));

fn take(policy: usize, who: &str, capacity: f64, rate: f64) -> Take<'static> {
    Take {
        key: BucketKey {
            policy: &POLICIES[policy],
            identity: Identity::of(
                &crate::IdentityKey::from_bytes([0; 32]),
                "test",
                who.as_bytes(),
            ),
        },
        spec: BucketSpec::new(capacity, rate).unwrap(),
        cost: 1.0,
        mode: Mode::Enforce,
        terms: Terms::default(),
    }
}

#[test]
fn identities_have_separate_buckets() {
    let store = MemoryStore::new(100);
    let alice = [take(1, "alice", 1.0, 1.0)];
    let bob = [take(1, "bob", 1.0, 1.0)];
    assert!(store.acquire_at(&alice, 0)[0].is_allowed());
    assert!(!store.acquire_at(&alice, 0)[0].is_allowed());
    assert!(store.acquire_at(&bob, 0)[0].is_allowed());
}

#[test]
fn a_request_refused_by_one_policy_takes_from_none() {
    let store = MemoryStore::new(100);
    let wide = take(1, "alice", 10.0, 1.0);
    let narrow = take(2, "alice", 1.0, 1.0);
    assert!(store
        .acquire_at(&[wide, narrow], 0)
        .iter()
        .all(|a| a.is_allowed()));
    let refused = store.acquire_at(&[wide, narrow], 0);
    assert!(refused[0].is_allowed() && !refused[1].is_allowed());
    // The wide bucket still holds the 9 tokens the refused request did not take.
    assert_eq!(store.acquire_at(&[wide], 0)[0].remaining(), 8.0);
}

#[test]
fn a_shadow_bucket_pays_on_its_own_and_never_blocks() {
    let store = MemoryStore::new(100);
    let enforcing = take(1, "alice", 2.0, 1.0);
    let shadow = Take {
        mode: Mode::Shadow,
        ..take(2, "alice", 1.0, 1.0)
    };
    let first = store.acquire_at(&[enforcing, shadow], 0);
    assert!(first[0].is_allowed() && first[1].is_allowed());
    let second = store.acquire_at(&[enforcing, shadow], 0);
    assert!(
        second[0].is_allowed() && !second[1].is_allowed(),
        "the shadow bucket is dry"
    );
    // The enforcing bucket paid both times although the shadow bucket ran dry.
    assert!(!store.acquire_at(&[enforcing], 0)[0].is_allowed());
}

#[test]
fn full_buckets_are_swept() {
    let store = MemoryStore::new(100_000);
    for who in 0..50 {
        store.acquire_at(&[take(1, &who.to_string(), 2.0, 1.0)], 0);
    }
    assert_eq!(store.len(), 50);
    // Long after those buckets refilled, writes to their shards sweep them away.
    let later = 10 * SWEEP_INTERVAL_US;
    for who in 0..1000 {
        store.acquire_at(&[take(2, &format!("x{who}"), 2.0, 1.0)], later);
    }
    assert_eq!(store.len(), 1000);
}

#[test]
fn the_cap_bounds_the_number_of_buckets() {
    let store = MemoryStore::new(MIN_SHARDS * 4);
    for who in 0..10_000 {
        store.acquire_at(&[take(1, &who.to_string(), 5.0, 0.001)], SECOND);
    }
    assert!(store.len() <= MIN_SHARDS * 4);
}

#[test]
fn shards_never_outgrow_their_cap() {
    let store = MemoryStore::new(1_000_000);
    assert_eq!(store.shards.len(), 70);
    assert!(store.per_shard_cap <= SHARD_CAP);
}

const HOUR: u64 = 3600 * SECOND;

/// `who`'s takes under the probe's two policies: 10 an hour and 100 a day.
fn hourly_and_daily(who: &str) -> [Take<'static>; 2] {
    [
        take(1, who, 10.0, 10.0 / 3600.0),
        take(2, who, 100.0, 100.0 / 86_400.0),
    ]
}

fn passes(store: &MemoryStore, takes: &[Take<'_>], now: u64) -> bool {
    store.acquire_at(takes, now).iter().all(|a| a.is_allowed())
}

#[test]
fn eviction_never_frees_a_debtor() {
    // The probe: max_entries = 1000, policies 10/h and 100/d, `evil` exhausted, then ~5,600
    // distinct keys.
    let store = MemoryStore::new(1000);
    let mut now = SECOND;
    for _ in 0..10 {
        assert!(passes(&store, &hourly_and_daily("evil"), now));
    }
    for key in 0..5600 {
        now += 1000;
        assert!(passes(
            &store,
            &hourly_and_daily(&format!("key-{key}")),
            now
        ));
    }
    let refused = (0..3)
        .filter(|_| !passes(&store, &hourly_and_daily("evil"), now))
        .count();
    assert_eq!(refused, 3, "evil stays refused");
    assert!(store.len() <= 1008, "the cap holds: {}", store.len());
}

#[test]
fn a_debtor_is_kept_however_soon_its_bucket_would_be_full() {
    // Evil's bucket (1 a minute) is full long before the flood's (10 an hour): ranked by that
    // alone, it would be the first evicted.
    let store = MemoryStore::new(MIN_SHARDS * 4);
    let evil = [take(0, "evil", 1.0, 1.0 / 60.0)];
    assert!(passes(&store, &evil, 0));
    for key in 0..5000 {
        assert!(passes(
            &store,
            &[take(1, &format!("k{key}"), 10.0, 10.0 / 3600.0)],
            SECOND
        ));
    }
    assert!(!passes(&store, &evil, 2 * SECOND), "still in debt");
    assert!(store.len() <= MIN_SHARDS * 4, "{}", store.len());
    // Paid off, it is an ordinary caller again.
    assert!(passes(&store, &evil, 61 * SECOND));
}

fn bucket(policy_id: u64, who: &str) -> BucketId {
    BucketId {
        policy_id,
        identity: Identity::of(&IdentityKey::from_bytes([0; 32]), "test", who.as_bytes()),
    }
}

fn entry(full_at_us: u64, pay_at_us: u64) -> Entry {
    let state = BucketState {
        tokens: 1.0,
        updated_us: 0,
        blocked_until_us: 0,
    };
    Entry {
        state,
        full_at_us,
        pay_at_us,
    }
}

#[test]
fn callers_are_evicted_whole_by_their_last_bucket_to_fill() {
    let mut shard = Shard::default();
    shard.store(bucket(1, "a"), entry(SECOND, 0), 0, 10);
    shard.store(bucket(2, "a"), entry(HOUR, 0), 0, 10);
    shard.store(bucket(1, "b"), entry(600 * SECOND, 0), 0, 10);
    // `a` has the bucket full soonest, but `b` is the caller whose buckets are all full first.
    shard.store(bucket(1, "c"), entry(HOUR, 0), 0, 3);
    assert_eq!(shard.len(), 3);
    assert!(shard.get(&bucket(1, "b")).is_none());
    let a = Caller {
        full_at_us: HOUR,
        pay_at_us: 0,
    };
    assert_eq!(shard.caller(bucket(1, "a").identity), Some(a));
}

#[test]
fn only_debts_grow_a_shard_and_only_to_twice_its_share() {
    let (cap, owed) = (2, HOUR);
    let mut shard = Shard::default();
    shard.store(bucket(1, "d1"), entry(2 * HOUR, owed), 0, cap);
    shard.store(bucket(1, "d2"), entry(2 * HOUR, owed + 1), 0, cap);
    // Both owe: the shard grows rather than forgive.
    shard.store(bucket(1, "d3"), entry(2 * HOUR, owed + 2), 0, cap);
    assert_eq!(shard.len(), 3);
    // A caller that owes nothing is the one evicted next.
    shard.store(bucket(1, "n1"), entry(HOUR, 0), 0, cap);
    assert_eq!(shard.len(), 4);
    shard.store(bucket(1, "n2"), entry(HOUR, 0), 0, cap);
    assert_eq!(shard.len(), 4, "n1 made room");
    assert!(shard.get(&bucket(1, "n1")).is_none());
    // At twice the share with only debtors left to look at, the soonest debt is forgiven.
    shard.store(bucket(1, "d4"), entry(2 * HOUR, owed + 3), 0, cap);
    shard.store(bucket(1, "d5"), entry(2 * HOUR, owed + 4), 0, cap);
    assert_eq!(shard.len(), 4);
    assert!(
        shard.get(&bucket(1, "d1")).is_none(),
        "the debt paid off first"
    );
    assert!(shard.get(&bucket(1, "d2")).is_some());
}

#[test]
fn the_memory_store_never_answers_an_absurd_retry_after() {
    // `rate = "1e-300/s"` cannot make a bucket; the slowest that can waits at most ten years.
    assert!(BucketSpec::new(1.0, 1e-300).is_err());
    let slowest_rate = 1e6 / MAX_REFILL_US;
    let store = MemoryStore::new(100);
    let slow = [Take {
        spec: BucketSpec::new(1.0, slowest_rate).unwrap(),
        ..take(1, "slow", 1.0, 1.0)
    }];
    assert!(passes(&store, &slow, 0));
    let refused = store.acquire_at(&slow, SECOND)[0];
    assert!(!refused.is_allowed());
    assert!(refused.wait_us() <= MAX_REFILL_US as u64);
    assert!(
        refused.wait_us() / SECOND < 10 * 366 * 86_400,
        "under ten years"
    );
}

#[test]
fn a_bucket_can_be_set_to_what_another_store_said() {
    let store = MemoryStore::new(100);
    let t = take(1, "alice", 5.0, 1.0);
    store.set_at(&t, 0.5, 0);
    assert!(!store.acquire_at(&[t], 0)[0].is_allowed());
    assert!(
        store.acquire_at(&[t], SECOND / 2)[0].is_allowed(),
        "0.5 + 0.5 refilled"
    );
    store.set_at(&t, 99.0, SECOND);
    assert_eq!(store.len(), 0, "a full bucket is no bucket");
}

#[test]
fn the_answer_is_at_hand_and_takes_like_acquire() {
    let store = MemoryStore::new(100);
    let alice = [take(1, "alice", 2.0, 0.001)];
    let at_hand = store
        .acquire_at_hand(&alice)
        .map(|a| a.map(|a| a[0].is_allowed()));
    assert_eq!(at_hand, Some(Ok(true)));
    assert!(store.acquire_now(&alice)[0].is_allowed());
    let spent = store
        .acquire_at_hand(&alice)
        .map(|a| a.map(|a| a[0].is_allowed()));
    assert_eq!(spent, Some(Ok(false)), "the two tokens are gone");
}
