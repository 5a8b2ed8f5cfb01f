//! The arithmetic's unit tests: exact answers at explicit instants, no sleeping.

use super::*;

const SECOND: u64 = 1_000_000;

fn spec(capacity: f64, rate_per_second: f64) -> BucketSpec {
    BucketSpec::new(capacity, rate_per_second).unwrap()
}

/// Takes `cost` at `now`, storing the result as the memory store does.
fn take(s: &BucketSpec, state: &mut Option<BucketState>, cost: f64, now: u64) -> Assessment {
    take_with(s, state, cost, Terms::default(), now)
}

/// Takes `cost` at `now` under `terms`, storing the result as the memory store does.
fn take_with(
    s: &BucketSpec,
    state: &mut Option<BucketState>,
    cost: f64,
    terms: Terms,
    now: u64,
) -> Assessment {
    let level = s.refill(*state, now);
    let a = s.assess(level, cost, terms, now);
    if a.is_allowed() {
        *state = Some(s.after_take(level, &a));
    } else if a.penalty() == Penalty::Started {
        *state = Some(s.after_refusal(level, terms, now));
    }
    a
}

fn at(tokens: f64, updated_us: u64) -> BucketState {
    BucketState {
        tokens,
        updated_us,
        blocked_until_us: 0,
    }
}

#[test]
fn an_unknown_bucket_is_full() {
    let s = spec(10.0, 1.0);
    assert_eq!(s.refill(None, 42).tokens, 10.0);
}

#[test]
fn a_burst_of_capacity_passes_then_the_next_is_refused() {
    let s = spec(10.0, 10.0);
    let mut state = None;
    for i in 0..10 {
        let a = take(&s, &mut state, 1.0, 0);
        assert!(a.is_allowed(), "request {i}");
        assert_eq!(a.remaining(), 9.0 - i as f64);
    }
    let refused = take(&s, &mut state, 1.0, 0);
    assert!(!refused.is_allowed());
    assert_eq!(refused.wait_us(), 100_000);
    assert_eq!(refused.full_in_us(), SECOND);
}

#[test]
fn refill_adds_rate_times_elapsed() {
    let s = spec(10.0, 2.0);
    let state = Some(at(1.0, 0));
    assert_eq!(s.refill(state, 2 * SECOND).tokens, 5.0);
}

#[test]
fn refill_caps_at_capacity() {
    let s = spec(10.0, 2.0);
    let state = Some(at(9.0, 0));
    assert_eq!(s.refill(state, 60 * SECOND).tokens, 10.0);
}

#[test]
fn fractional_refill_is_kept_across_requests() {
    // 1 token per 3 s: three requests one second apart add up to one whole token.
    let s = spec(1.0, 1.0 / 3.0);
    let mut state = Some(at(0.0, 0));
    assert!(!take(&s, &mut state, 1.0, SECOND).is_allowed());
    assert!(!take(&s, &mut state, 1.0, 2 * SECOND).is_allowed());
    assert!(take(&s, &mut state, 1.0, 3 * SECOND).is_allowed());
}

#[test]
fn fractional_rates_per_minute_give_exact_retry_after() {
    // 1 per 60 s (seed 004): the second request waits the whole minute.
    let s = spec(1.0, 1.0 / 60.0);
    let mut state = None;
    assert!(take(&s, &mut state, 1.0, 0).is_allowed());
    let refused = take(&s, &mut state, 1.0, 15 * SECOND);
    assert!(!refused.is_allowed());
    assert_eq!(refused.wait_us(), 45 * SECOND);
    assert!(take(&s, &mut state, 1.0, 60 * SECOND).is_allowed());
}

#[test]
fn cost_above_one_takes_that_many_tokens() {
    // Seed 001: cost 5 on capacity 10 → allowed, allowed, refused.
    let s = spec(10.0, 1.0);
    let mut state = None;
    assert!(take(&s, &mut state, 5.0, 0).is_allowed());
    assert!(take(&s, &mut state, 5.0, 0).is_allowed());
    let refused = take(&s, &mut state, 5.0, 0);
    assert!(!refused.is_allowed());
    assert_eq!(refused.remaining(), 0.0);
    assert_eq!(refused.wait_us(), 5 * SECOND);
}

#[test]
fn a_refused_request_takes_nothing() {
    let s = spec(10.0, 1.0);
    let mut state = Some(at(3.0, 0));
    assert!(!take(&s, &mut state, 5.0, 0).is_allowed());
    assert_eq!(state.map(|b| b.tokens), Some(3.0));
}

#[test]
fn a_long_idle_gap_refills_to_capacity_without_overflow() {
    let s = spec(5.0, 1000.0);
    let state = Some(at(0.0, 0));
    let level = s.refill(state, u64::MAX);
    assert_eq!(level.tokens, 5.0);
    assert_eq!(level.updated_us, u64::MAX);
}

#[test]
fn a_clock_going_backwards_counts_as_no_time() {
    let s = spec(10.0, 1.0);
    let state = Some(at(2.0, 10 * SECOND));
    let level = s.refill(state, 4 * SECOND);
    assert_eq!(level.tokens, 2.0);
    assert_eq!(level.updated_us, 10 * SECOND, "the later stamp is kept");
    // Once the clock passes the stored stamp again, only the new interval counts.
    assert_eq!(s.refill(Some(level), 11 * SECOND).tokens, 3.0);
}

#[test]
fn waiting_the_retry_after_is_always_enough() {
    for rate in [0.1, 0.3, 1.0, 3.0, 7.0, 10.0, 333.0] {
        let s = spec(3.0, rate);
        let mut state = Some(at(0.123, 1));
        let refused = take(&s, &mut state, 1.0, 1);
        assert!(!refused.is_allowed());
        let later = 1 + refused.wait_us();
        assert!(take(&s, &mut state, 1.0, later).is_allowed(), "rate {rate}");
    }
}

#[test]
fn specs_that_would_lose_exactness_are_refused() {
    assert_eq!(BucketSpec::new(0.0, 1.0), Err(SpecError::Capacity));
    assert_eq!(BucketSpec::new(1e13, 1.0), Err(SpecError::Capacity));
    assert_eq!(BucketSpec::new(1.0, 0.0), Err(SpecError::Rate));
    assert_eq!(BucketSpec::new(1.0, f64::NAN), Err(SpecError::Rate));
    assert_eq!(BucketSpec::new(1.0, 1e-300), Err(SpecError::TooSlow));
    // One token a year, and a year's worth of tokens at once, are fine.
    assert!(BucketSpec::new(1.0, 1.0 / (365.0 * 86_400.0)).is_ok());
    let slowest = BucketSpec::new(MAX_CAPACITY, 1e9).unwrap();
    assert!(slowest.micros_to_gain(MAX_CAPACITY, 0) < u64::MAX / 1000);
}

#[test]
fn a_charge_past_the_level_leaves_debt_that_refill_pays_off() {
    let s = spec(100.0, 10.0);
    let mut state = Some(at(50.0, 0));
    let level = s.refill(state, 0);
    let charged = s.settle(level, 80.0, 0);
    assert!(charged.is_allowed());
    assert_eq!(charged.remaining(), -30.0);
    state = Some(s.after_settle(level, 80.0, 0));
    // In debt, even a cost of one waits for the debt to be paid off.
    let refused = take(&s, &mut state, 1.0, 0);
    assert!(!refused.is_allowed());
    assert_eq!(refused.wait_us(), 3_100_000);
    assert!(take(&s, &mut state, 1.0, 3_100_000).is_allowed());
}

#[test]
fn a_refund_never_fills_past_capacity() {
    let s = spec(10.0, 1.0);
    let level = at(8.0, 0);
    assert_eq!(s.settle(level, -5.0, 0).remaining(), 10.0);
    assert_eq!(s.after_settle(level, -1.5, 0).tokens, 9.5);
}

#[test]
fn full_in_counts_from_what_is_left() {
    let s = spec(10.0, 2.0);
    let a = s.assess(at(10.0, 0), 4.0, Terms::default(), 0);
    assert_eq!(a.full_in_us(), 2 * SECOND);
}

#[test]
fn a_prepaid_take_waits_for_its_tokens_and_the_overdraft_bounds_the_debt() {
    // Capacity 1 at 5/s, max_delay 200 ms: an overdraft of one token.
    let s = spec(1.0, 5.0);
    let terms = Terms {
        overdraft: 1.0,
        block_us: 0,
    };
    let mut state = None;
    let first = take_with(&s, &mut state, 1.0, terms, 0);
    assert!(first.is_allowed() && first.wait_us() == 0);
    let second = take_with(&s, &mut state, 1.0, terms, 0);
    assert!(second.is_allowed(), "prepaid");
    assert_eq!(second.wait_us(), 200_000, "waits until its token is there");
    assert_eq!(second.remaining(), -1.0);
    let third = take_with(&s, &mut state, 1.0, terms, 0);
    assert!(!third.is_allowed(), "the overdraft is spent");
    assert_eq!(third.wait_us(), 200_000, "admitted (held) in 200 ms");
    assert_eq!(third.remaining(), -1.0, "a refusal takes nothing");
    let later = take_with(&s, &mut state, 1.0, terms, 200_000);
    assert!(later.is_allowed());
    assert_eq!(later.wait_us(), 200_000);
}

#[test]
fn seed_003_waits_within_the_timeout_and_refuses_beyond_it() {
    // Guava's tryAcquire(timeout): 1 permit, 2 per second, a timeout of one second. Four
    // requests at once: the first passes, the next two wait 0.5 s and 1 s, the fourth would
    // wait 1.5 s and is refused at once, taking nothing.
    let s = spec(1.0, 2.0);
    let terms = Terms {
        overdraft: 2.0,
        block_us: 0,
    };
    let mut state = None;
    let waits: Vec<Option<u64>> = (0..4)
        .map(|_| {
            let a = take_with(&s, &mut state, 1.0, terms, 0);
            a.is_allowed().then_some(a.wait_us())
        })
        .collect();
    assert_eq!(waits, [Some(0), Some(SECOND / 2), Some(SECOND), None]);
    assert_eq!(state.map(|b| b.tokens), Some(-2.0));
    // Half a second later one waiter's time has come and the next can wait its turn.
    let next = take_with(&s, &mut state, 1.0, terms, SECOND / 2);
    assert_eq!((next.is_allowed(), next.wait_us()), (true, SECOND));
}

#[test]
fn a_refusal_blocks_the_bucket_for_the_penalty_whatever_the_refill() {
    let s = spec(1.0, 10.0);
    let terms = Terms {
        overdraft: 0.0,
        block_us: 3 * SECOND,
    };
    let mut state = None;
    assert!(take_with(&s, &mut state, 1.0, terms, 0).is_allowed());
    let refused = take_with(&s, &mut state, 1.0, terms, 0);
    assert_eq!(refused.penalty(), Penalty::Started);
    assert_eq!(
        refused.wait_us(),
        3 * SECOND,
        "the block, not the 100 ms refill"
    );
    // A second later the bucket is full again, yet still refused, and the block is not
    // extended by the refusals it causes.
    let during = take_with(&s, &mut state, 1.0, terms, SECOND);
    assert_eq!(
        (during.is_allowed(), during.penalty(), during.wait_us()),
        (false, Penalty::Standing, 2 * SECOND)
    );
    assert_eq!(during.remaining(), 1.0);
    let stored = state.unwrap();
    assert_eq!(
        s.keep_for_us(&stored, SECOND),
        2 * SECOND,
        "kept until the block ends"
    );
    let after = take_with(&s, &mut state, 1.0, terms, 3 * SECOND);
    assert!(after.is_allowed() && after.penalty() == Penalty::None);
}

#[test]
fn a_settlement_leaves_a_block_standing() {
    let s = spec(10.0, 1.0);
    let level = BucketState {
        tokens: 5.0,
        updated_us: 0,
        blocked_until_us: 7,
    };
    assert_eq!(s.after_settle(level, -1.0, 0).blocked_until_us, 7);
    assert_eq!(s.settle(level, 1.0, 0).penalty(), Penalty::None);
}
