//! A quota's arithmetic, time as an argument: it refills all at once when its period ends,
//! the store's clock picks the period, and settlements stay in their request's period.

use super::*;

const SECOND: u64 = 1_000_000;
/// Periods of 100 s: [0, 100 s), [100 s, 200 s), [200 s, 300 s).
const BOUNDS: [u64; 4] = [0, 100 * SECOND, 200 * SECOND, 300 * SECOND];

fn quota(capacity: f64) -> BucketSpec {
    BucketSpec::quota(capacity, Periods::new(BOUNDS).unwrap()).unwrap()
}

/// Takes `cost` at `now`, storing the result as a store would; the answer.
fn take(s: &BucketSpec, state: &mut Option<BucketState>, cost: f64, now: u64) -> Assessment {
    let level = s.refill(*state, now);
    let a = s.assess(level, cost, Terms::default(), now);
    if a.is_allowed() {
        *state = Some(s.after_take(level, &a));
    }
    a
}

#[test]
fn a_quota_admits_its_count_then_waits_for_the_period_end() {
    let s = quota(3.0);
    let mut state = None;
    let t = 150 * SECOND;
    for left in [2.0, 1.0, 0.0] {
        let a = take(&s, &mut state, 1.0, t);
        assert!(a.is_allowed());
        assert_eq!(a.remaining(), left);
        assert_eq!(
            a.full_in_us(),
            50 * SECOND,
            "full again at the period's end"
        );
    }
    let refused = take(&s, &mut state, 1.0, t + SECOND);
    assert!(!refused.is_allowed());
    assert_eq!(refused.wait_us(), 49 * SECOND);
    assert_eq!(refused.remaining(), 0.0);
    assert_eq!(s.keep_for_us(&state.unwrap(), t), 50 * SECOND);
    // Not a token comes back before the end: no continuous refill.
    assert!(!take(&s, &mut state, 1.0, 200 * SECOND - 1).is_allowed());
    assert_eq!(s.micros_to_gain(1.0, 200 * SECOND - 1), 1);
}

#[test]
fn the_old_periods_count_never_leaks_into_the_new_one() {
    let s = quota(5.0);
    let mut state = None;
    // A burst that crosses the boundary at 200 s.
    for i in 0..5 {
        assert!(take(&s, &mut state, 1.0, 199 * SECOND + i).is_allowed());
    }
    assert!(!take(&s, &mut state, 1.0, 200 * SECOND - 1).is_allowed());
    for _ in 0..5 {
        assert!(
            take(&s, &mut state, 1.0, 200 * SECOND).is_allowed(),
            "a whole new period"
        );
    }
    let refused = take(&s, &mut state, 1.0, 200 * SECOND);
    assert!(!refused.is_allowed(), "and not one more");
    assert_eq!(
        refused.wait_us(),
        100 * SECOND,
        "until the end of [200 s, 300 s)"
    );
}

#[test]
fn the_stores_clock_picks_the_period_whatever_the_callers_clock_said() {
    let s = quota(2.0);
    // The instance computed its periods at 150 s; the store's clock says 99 s: the period
    // before, whose end is 100 s.
    let mut state = None;
    let a = take(&s, &mut state, 2.0, 99 * SECOND);
    assert!(a.is_allowed());
    assert_eq!(a.full_in_us(), SECOND);
    let a = take(&s, &mut state, 1.0, 100 * SECOND);
    assert!(
        a.is_allowed(),
        "a state from before the period's start is a full quota"
    );
}

#[test]
fn settlements_apply_only_in_the_period_their_request_was_admitted_in() {
    let s = quota(10.0);
    let mut state = None;
    take(&s, &mut state, 4.0, 150 * SECOND);
    let level = s.refill(state, 160 * SECOND);
    assert_eq!(
        s.after_settle(level, -3.0, 160 * SECOND).tokens,
        9.0,
        "a refund"
    );
    assert_eq!(
        s.after_settle(level, 20.0, 160 * SECOND).tokens,
        -14.0,
        "a charge, into debt"
    );
    // After the period ends, neither a refund nor a charge changes the new period.
    let later = s.refill(state, 210 * SECOND);
    assert_eq!(later.tokens, 10.0);
    assert_eq!(s.after_settle(later, 3.0, 210 * SECOND).tokens, 10.0);
    assert_eq!(s.settle(later, -3.0, 210 * SECOND).remaining(), 10.0);
}

#[test]
fn a_block_outlives_the_period_when_it_is_longer() {
    let s = quota(1.0);
    let terms = Terms {
        overdraft: 0.0,
        block_us: 120 * SECOND,
    };
    let level = s.refill(None, 190 * SECOND);
    let paid = s.after_take(level, &s.assess(level, 1.0, terms, 190 * SECOND));
    let refused = s.assess(paid, 1.0, terms, 191 * SECOND);
    assert_eq!(refused.penalty(), Penalty::Started);
    assert_eq!(refused.wait_us(), 120 * SECOND);
    let blocked = s.after_refusal(paid, terms, 191 * SECOND);
    let next_period = s.refill(Some(blocked), 250 * SECOND);
    assert_eq!(next_period.tokens, 1.0, "the new period's quota is there");
    let a = s.assess(next_period, 1.0, terms, 250 * SECOND);
    assert_eq!(
        (a.is_allowed(), a.penalty()),
        (false, Penalty::Standing),
        "but the block stands"
    );
}
