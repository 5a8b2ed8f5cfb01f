//! The deny cache's rules, time as an argument.

use super::*;
use crate::{BucketKey, BucketSpec, Mode, PolicyKey, Terms};
use std::sync::LazyLock;

static POLICIES: LazyLock<[PolicyKey; 3]> =
    LazyLock::new(|| ["p0", "p1", "p2"].map(PolicyKey::new));

fn take(who: &str, policy: usize) -> Take<'static> {
    Take {
        key: BucketKey {
            policy: &POLICIES[policy],
            identity: Identity::of(
                &crate::IdentityKey::from_bytes([0; 32]),
                "t",
                who.as_bytes(),
            ),
        },
        spec: BucketSpec::new(1.0, 1.0).unwrap(),
        cost: 1.0,
        mode: Mode::Enforce,
        terms: Terms::default(),
    }
}

fn refused(retry_after_us: u64) -> Assessment {
    Assessment::refused(0.0, retry_after_us, retry_after_us, Penalty::None)
}

#[test]
fn a_refusal_stands_until_its_retry_after() {
    let cache = DenyCache::new(100);
    let takes = [take("a", 1)];
    cache.remember(&takes, &[refused(1000)], 10);
    let Lookup::Refused(refusal) = cache.lookup(&takes, 510) else {
        panic!("refused until T");
    };
    assert_eq!(refusal[0].wait_us(), 500);
    assert!(
        matches!(cache.lookup(&takes, 1010), Lookup::Ask(_)),
        "the store decides again at T"
    );
    assert_eq!(
        cache.lookup(&[take("b", 1)], 510),
        Lookup::Unknown,
        "other callers are not refused"
    );
    assert_eq!(
        cache.lookup(&[take("a", 2)], 510),
        Lookup::Unknown,
        "other policy sets are not refused"
    );
}

#[test]
fn a_long_refusal_is_reused_for_a_second_with_its_true_wait() {
    let cache = DenyCache::new(100);
    let takes = [take("a", 1)];
    let until_midnight = 36_000_000_000;
    cache.remember(&takes, &[refused(until_midnight)], 0);
    let Lookup::Refused(refusal) = cache.lookup(&takes, 500_000) else {
        panic!("refused from the cache within the second");
    };
    assert_eq!(refusal[0].wait_us(), until_midnight - 500_000);
    assert!(
        matches!(cache.lookup(&takes, REUSED_FOR_US), Lookup::Ask(_)),
        "then the store is asked again: a reset elsewhere shows within a second"
    );
    let Lookup::Behind(refusal) = cache.lookup(&takes, REUSED_FOR_US + 1) else {
        panic!("the others are refused while it asks");
    };
    assert_eq!(
        refusal[0].wait_us(),
        until_midnight - REUSED_FOR_US - 1,
        "with the true wait"
    );
}

#[test]
fn allowed_answers_are_not_remembered() {
    let cache = DenyCache::new(100);
    let takes = [take("a", 1)];
    let allowed = Assessment::allowed(0.0, 0, 5);
    cache.remember(&takes, &[allowed], 0);
    assert!(cache.is_empty());
}

#[test]
fn the_cache_is_bounded() {
    let cache = DenyCache::new(SHARDS * 2);
    for i in 0..1000 {
        cache.remember(&[take(&i.to_string(), 1)], &[refused(1_000_000)], 0);
    }
    assert!(cache.len() <= SHARDS * 2);
    // Once they expired, new refusals find room again.
    cache.remember(&[take("late", 1)], &[refused(5)], 2_000_000);
    assert!(matches!(
        cache.lookup(&[take("late", 1)], 2_000_001),
        Lookup::Refused(_)
    ));
}

#[test]
fn a_refusal_at_one_cost_says_nothing_of_another() {
    let cache = DenyCache::new(100);
    let costly = Take {
        cost: 4.0,
        ..take("a", 1)
    };
    cache.remember(&[costly], &[refused(1000)], 0);
    assert!(matches!(cache.lookup(&[costly], 1), Lookup::Refused(_)));
    assert_eq!(cache.lookup(&[take("a", 1)], 1), Lookup::Unknown);
}

#[test]
fn a_refund_forgets_the_callers_refusals() {
    let cache = DenyCache::new(100);
    cache.remember(&[take("a", 1)], &[refused(1000)], 0);
    cache.remember(&[take("a", 2)], &[refused(1000)], 0);
    cache.remember(&[take("b", 1)], &[refused(1000)], 0);
    assert_eq!(cache.len(), 2, "two callers");
    cache.forget(&take("a", 1).key.identity);
    assert_eq!(cache.lookup(&[take("a", 2)], 1), Lookup::Unknown);
    assert!(matches!(
        cache.lookup(&[take("b", 1)], 1),
        Lookup::Refused(_)
    ));
}

#[test]
fn a_long_lapsed_refusal_is_forgotten() {
    let cache = DenyCache::new(100);
    let takes = [take("a", 1)];
    cache.remember(&takes, &[refused(1000)], 0);
    assert_eq!(
        cache.lookup(&takes, 1000 + LAPSED_FOR_US),
        Lookup::Unknown,
        "a refusal lapsed long ago no longer has the caller ask one at a time"
    );
}

/// Issue #82: with Redis a few milliseconds away, the requests that came while one asked
/// about a lapsed refusal waited for its call (two round trips when it was allowed).
#[test]
fn when_a_refusal_lapses_one_request_asks_and_the_others_are_refused_at_once() {
    let cache = DenyCache::new(100);
    let takes = [take("a", 1)];
    let blocked = Assessment::refused(0.0, 1000, 1000, Penalty::Started);
    cache.remember(&takes, &[blocked], 0);
    let Lookup::Ask(ticket) = cache.lookup(&takes, 1000) else {
        panic!("the first request after T asks");
    };
    for now in [1000, 1500, 4000] {
        let Lookup::Behind(refusal) = cache.lookup(&takes, now) else {
            panic!("the others are refused while it asks");
        };
        let Assessment::Refused(refused) = refusal[0] else {
            panic!("refused");
        };
        assert_eq!(refused.retry_after_us, 1, "about a token away");
        assert_eq!(refused.penalty, Penalty::None, "the block has ended");
    }
    assert!(
        matches!(cache.lookup(&[take("b", 1)], 1000), Lookup::Unknown),
        "other callers ask freely"
    );
    // Its call ended without an answer (failed, out of budget, the request gone): the next
    // request asks.
    cache.release(&takes, ticket);
    cache.release(&takes, Ticket(ticket.0 + 1000));
    let Lookup::Ask(second) = cache.lookup(&takes, 4000) else {
        panic!("the next request asks");
    };
    assert_ne!(second, ticket);
    // A stale ticket given back does not free another request's turn.
    cache.release(&takes, ticket);
    assert!(matches!(cache.lookup(&takes, 4001), Lookup::Behind(_)));
}

#[test]
fn an_allowance_with_room_frees_the_caller_and_one_without_keeps_it_asking_alone() {
    let cache = DenyCache::new(100);
    let takes = [take("a", 1)];
    cache.remember(&takes, &[refused(1000)], 0);
    let Lookup::Ask(_) = cache.lookup(&takes, 1000) else {
        panic!("asks");
    };
    // Allowed, leaving less than another take's cost: the next request asks alone.
    cache.allowed(&takes, &[Assessment::allowed(0.2, 0, 800_000)]);
    assert!(matches!(cache.lookup(&takes, 1100), Lookup::Ask(_)));
    assert!(matches!(cache.lookup(&takes, 1101), Lookup::Behind(_)));
    // Allowed with room for another: every request asks the store again.
    cache.allowed(&takes, &[Assessment::allowed(1.0, 0, 0)]);
    assert_eq!(cache.lookup(&takes, 1200), Lookup::Unknown);
    assert!(cache.is_empty());
    // An overdraft counts as room.
    let prepaid = Take {
        terms: Terms {
            overdraft: 2.0,
            block_us: 0,
        },
        ..take("a", 1)
    };
    cache.remember(&[prepaid], &[refused(1000)], 0);
    cache.allowed(&[prepaid], &[Assessment::allowed(-0.5, 500_000, 1_500_000)]);
    assert!(cache.is_empty());
}

#[test]
fn an_allowance_without_room_leaves_a_standing_refusal_standing() {
    let cache = DenyCache::new(100);
    let takes = [take("a", 1)];
    cache.remember(&takes, &[refused(1000)], 0);
    cache.allowed(&takes, &[Assessment::allowed(0.0, 0, 1_000_000)]);
    assert!(matches!(cache.lookup(&takes, 500), Lookup::Refused(_)));
}
