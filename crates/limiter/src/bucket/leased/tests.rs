//! The lease arithmetic's tests: exact answers at explicit instants, and a fleet simulated
//! against the exact bucket.

use super::*;
use crate::bucket::EPSILON;

const SECOND: u64 = 1_000_000;

fn spec() -> BucketSpec {
    BucketSpec::new(100.0, 10.0).unwrap()
}

fn full(now: u64) -> LeasedState {
    spec().refill_leased(None, now)
}

#[test]
fn a_full_bucket_lends_and_refills_only_up_to_what_is_not_out() {
    let s = spec();
    let t0 = 5 * LEASE_WINDOW_US;
    let (a, lent) = s.lend(full(t0), 30.0, t0);
    assert!(a.is_allowed());
    let lent = lent.unwrap();
    assert_eq!(lent.bucket.tokens, 70.0);
    // Ten seconds would refill 100 tokens; 30 are still out.
    let later = s.refill_leased(Some(lent), t0 + 10 * SECOND);
    assert_eq!(later.bucket.tokens, 70.0, "bucket + lease = 100 = capacity");
    // 20 spent, 10 back: the bucket may refill to capacity again.
    let (_, back) = s.take_back(later, 10.0, 30.0, OnLease::window_of(t0));
    assert_eq!(back.bucket.tokens, 80.0);
    assert_eq!(back.on_lease.total(), 0.0);
    let full_again = s.refill_leased(Some(back), t0 + 12 * SECOND);
    assert_eq!(full_again.bucket.tokens, 100.0);
}

#[test]
fn what_a_window_lent_is_forgotten_two_windows_later_and_its_late_return_gives_nothing() {
    let s = spec();
    let t0 = 7 * LEASE_WINDOW_US + LEASE_WINDOW_US / 2;
    let (_, lent) = s.lend(full(t0), 40.0, t0);
    let lent = lent.unwrap();
    let next = s.refill_leased(Some(lent), t0 + LEASE_WINDOW_US);
    assert_eq!(next.on_lease.previous, 40.0, "one window on: still counted");
    assert_eq!(next.bucket.tokens, 60.0);
    let gone = s.refill_leased(Some(lent), t0 + 2 * LEASE_WINDOW_US);
    assert_eq!(gone.on_lease.total(), 0.0);
    assert_eq!(gone.bucket.tokens, 100.0, "forgotten: refilled to capacity");
    let (_, after) = s.take_back(gone, 40.0, 40.0, OnLease::window_of(t0));
    assert_eq!(after.bucket.tokens, 100.0, "a late return gives nothing");
    assert_eq!(s.keep_leased_for_us(&gone, t0 + 2 * LEASE_WINDOW_US), 0);
}

#[test]
fn refill_across_a_window_boundary_is_capped_piece_by_piece() {
    let s = spec();
    let boundary = 3 * LEASE_WINDOW_US;
    let (_, lent) = s.lend(full(boundary - SECOND), 50.0, boundary - SECOND);
    let mut lent = lent.unwrap();
    lent.bucket.tokens = 0.0;
    // One second before the boundary (cap 50) and two after (the lease now counts as the
    // window before, cap still 50).
    let later = s.refill_leased(Some(lent), boundary + 2 * SECOND);
    assert_eq!(later.bucket.tokens, 30.0);
    assert_eq!(later.on_lease.previous, 50.0);
}

#[test]
fn nothing_lent_refills_exactly_as_the_plain_bucket() {
    let s = BucketSpec::new(5.0, 1733.0).unwrap();
    let stored = LeasedState {
        bucket: BucketState {
            tokens: 0.123,
            updated_us: 1_000_003,
            blocked_until_us: 0,
        },
        on_lease: OnLease::default(),
    };
    for now in [1_000_003, 1_000_400, 1_002_017, 900_000] {
        let leased = s.refill_leased(Some(stored), now).bucket;
        assert_eq!(leased, s.refill(Some(stored.bucket), now));
    }
}

#[test]
fn a_refund_fills_only_up_to_what_is_not_out() {
    let s = spec();
    let (_, lent) = s.lend(full(0), 30.0, 0);
    let (a, after) = s.settle_leased(lent.unwrap(), -50.0);
    assert_eq!((a.remaining(), after.bucket.tokens), (70.0, 70.0));
}

/// A small deterministic generator.
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

/// One instance's live lease: unspent tokens, size, window, and when it lapses there.
#[derive(Clone, Copy)]
struct Held {
    unspent: f64,
    size: f64,
    window: u64,
    lapses_us: u64,
}

#[test]
fn a_fleet_spending_leases_never_admits_more_than_the_exact_bucket() {
    let s = BucketSpec::new(20.0, 5.0).unwrap();
    let lease_for = 10 * SECOND;
    for seed in 0..40 {
        let mut rng = Lcg(seed);
        let mut redis: Option<LeasedState> = None;
        let mut exact: Option<BucketState> = None;
        let mut held: [Option<Held>; 3] = [None; 3];
        let mut now = 1_000 * SECOND;
        let mut admitted = 0;
        for _ in 0..3000 {
            now += match rng.next(20) {
                0 => 15 * SECOND + rng.next(20 * SECOND),
                1..=4 => rng.next(2 * SECOND),
                _ => rng.next(50_000),
            };
            let i = rng.next(3) as usize;
            // A lapsed lease goes back (now or late), or never when its instance died.
            if let Some(h) = held[i].filter(|h| now >= h.lapses_us) {
                held[i] = None;
                if rng.next(8) != 0 {
                    let level = s.refill_leased(redis, now);
                    redis = Some(s.take_back(level, h.unspent, h.size, h.window).1);
                }
            }
            let admit = match (&mut held[i], rng.next(4)) {
                (Some(h), _) if h.unspent >= 1.0 => {
                    h.unspent -= 1.0;
                    true
                }
                (None, 0) => {
                    let size = 1.0 + rng.next(8) as f64;
                    let level = s.refill_leased(redis, now);
                    if let (a, Some(lent)) = s.lend(level, size, now) {
                        assert!(a.is_allowed());
                        redis = Some(lent);
                        held[i] = Some(Held {
                            unspent: size,
                            size,
                            window: OnLease::window_of(now),
                            lapses_us: now + lease_for,
                        });
                    }
                    false
                }
                _ => {
                    let level = s.refill_leased(redis, now);
                    let a = s.assess(level.bucket, 1.0, Terms::default(), now);
                    if a.is_allowed() {
                        redis = Some(LeasedState {
                            bucket: s.after_take(level.bucket, &a),
                            ..level
                        });
                    }
                    a.is_allowed()
                }
            };
            if admit {
                admitted += 1;
                let level = s.refill(exact, now);
                assert!(
                    level.tokens + EPSILON >= 1.0,
                    "seed {seed}: the fleet admitted a request the exact bucket refuses at {now}"
                );
                exact = Some(BucketState {
                    tokens: level.tokens - 1.0,
                    ..level
                });
            }
        }
        assert!(admitted > 500, "seed {seed}: {admitted} admitted");
    }
}
