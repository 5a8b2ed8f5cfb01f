//! The leases of hot callers, with time passed in.

use super::*;
use crate::IdentityKey;

const MS: u64 = 1000;

fn policy() -> PolicyKey {
    PolicyKey::new("p")
}

fn hot() -> Identity {
    Identity::of(&IdentityKey::from_bytes([0; 32]), "t", b"hot")
}

fn key() -> BucketId {
    BucketId {
        policy_id: policy().id(),
        identity: hot(),
    }
}

fn grant(policy: &PolicyKey, spec: BucketSpec, size: f64, asked_us: u64) -> Grant<'_> {
    Grant {
        policy,
        identity: hot(),
        spec,
        size,
        window: 7,
        redis_remaining: 500.0,
        asked_us,
    }
}

#[test]
fn a_caller_earns_a_lease_by_passing_often_and_spends_it_locally() {
    let leases = Leases::new(100 * MS);
    let spec = BucketSpec::new(1e6, 1e4).unwrap();
    assert_eq!(leases.heat(key(), spec, 1.0, 1, 0), None, "one is not hot");
    assert_eq!(
        leases.heat(key(), spec, 1.0, 1, MS),
        Some(2.0),
        "two ask for two"
    );
    assert_eq!(
        leases.heat(key(), spec, 1.0, 1, 2 * MS),
        None,
        "one ask at a time"
    );
    leases.abandon(key());
    let size = (3..10).find_map(|i| leases.heat(key(), spec, 1.0, 1, i * MS));
    assert_eq!(
        size,
        Some(4.0),
        "four requests in the period ask for four tokens"
    );
    let p = policy();
    assert_eq!(leases.grant(grant(&p, spec, 12.0, 10 * MS)), None);
    for _ in 0..9 {
        let spent = leases.spend(key(), spec, 1.0, 1, 20 * MS).unwrap();
        assert!(spent.answer.is_allowed() && spent.answer.remaining() >= 500.0);
        assert_eq!(spent.renew, None, "more than a quarter left");
    }
    let spent = leases.spend(key(), spec, 1.0, 1, 20 * MS).unwrap();
    assert!(spent.renew.is_some(), "2 of 12 left: renew now");
    assert_eq!(
        leases.spend(key(), spec, 1.0, 1, 20 * MS).unwrap().renew,
        None
    );
    leases.spend(key(), spec, 1.0, 1, 20 * MS).unwrap();
    assert!(
        leases.spend(key(), spec, 1.0, 1, 20 * MS).is_none(),
        "spent"
    );
}

#[test]
fn a_lease_is_renewed_when_a_quarter_of_its_time_is_left_and_the_old_one_goes_back_first() {
    let leases = Leases::new(100 * MS);
    let spec = BucketSpec::new(1e6, 1e4).unwrap();
    let p = policy();
    leases.grant(grant(&p, spec, 100.0, 0));
    assert_eq!(
        leases.spend(key(), spec, 1.0, 1, 70 * MS).unwrap().renew,
        None
    );
    let renew = leases.spend(key(), spec, 1.0, 1, 80 * MS).unwrap().renew;
    assert_eq!(
        renew,
        Some(2.0),
        "20 of 100 ms left: renew, sized by two requests"
    );
    assert_eq!(
        leases.spend(key(), spec, 1.0, 1, 81 * MS).unwrap().renew,
        None,
        "asked"
    );
    let back = leases.take_out(key()).unwrap();
    assert_eq!((back.leased, back.unspent, back.window), (100.0, 97.0, 7));
    assert!(
        leases.spend(key(), spec, 1.0, 1, 82 * MS).is_none(),
        "until the new lease is in, Redis decides"
    );
    assert_eq!(leases.take_out(key()), None, "taken out once");
    assert_eq!(leases.grant(grant(&p, spec, 2.0, 80 * MS)), None);
    assert!(leases.spend(key(), spec, 1.0, 1, 83 * MS).is_some());
}

#[test]
fn a_lease_granted_over_a_held_one_sends_the_held_one_back() {
    let leases = Leases::new(100 * MS);
    let spec = BucketSpec::new(1e6, 1e4).unwrap();
    let p = policy();
    leases.grant(grant(&p, spec, 10.0, 0));
    leases.spend(key(), spec, 1.0, 1, MS).unwrap();
    let back = leases.grant(grant(&p, spec, 5.0, 2 * MS)).unwrap();
    assert_eq!((back.leased, back.unspent), (10.0, 9.0));
}

#[test]
fn a_lease_is_capped_by_the_bucket_and_the_fleet() {
    let leases = Leases::new(100 * MS);
    let spec = BucketSpec::new(300.0, 1e4).unwrap();
    let sizes: Vec<f64> = (0..100)
        .filter_map(|i| leases.heat(key(), spec, 1.0, 3, i * 100))
        .collect();
    assert_eq!(sizes, vec![2.0], "one ask, then it waits for its answer");
    leases.abandon(key());
    assert_eq!(
        leases.heat(key(), spec, 1.0, 3, 100 * 100),
        Some(5.0),
        "300 × 5 % ÷ 3"
    );
    let small = BucketSpec::new(20.0, 50.0).unwrap();
    let other = BucketId {
        policy_id: 8,
        identity: Identity::of(&IdentityKey::from_bytes([0; 32]), "t", b"flood"),
    };
    assert!((0..100).all(|i| leases.heat(other, small, 1.0, 3, i * 100).is_none()));
}

#[test]
fn a_lapsed_lease_goes_back_once_even_when_fully_spent() {
    let leases = Leases::new(100 * MS);
    let spec = BucketSpec::new(1e6, 1e4).unwrap();
    let p = policy();
    leases.grant(grant(&p, spec, 3.0, 0));
    for _ in 0..3 {
        leases.spend(key(), spec, 1.0, 1, 50 * MS).unwrap();
    }
    assert!(leases.lapsed(99 * MS).is_empty(), "still live");
    let refunds = leases.lapsed(100 * MS);
    assert_eq!(refunds.len(), 1);
    assert_eq!((refunds[0].leased, refunds[0].unspent), (3.0, 0.0));
    assert!(leases.lapsed(200 * MS).is_empty(), "given back once");
}
