//! Leases in the Lua script against their specification (`bucket/leased.rs`): takes, leases,
//! returns (on time, a window late, too late) and refunds through `lua/take.lua` in a real Redis
//! and through the arithmetic give the same answers and store the same state, to the bit,
//! also from stored states whose lease windows lie in the past (so refill crosses window
//! boundaries).

use crate::common;

use common::difftest::{settings, store, Lcg};
use common::redis::RedisServer;
use floodgate::identity::{Identity, IdentityKey};
use floodgate::limiter::bucket::{LeasedState, OnLease, LEASE_WINDOW_US};
use floodgate::limiter::{
    Assessment, BucketKey, BucketSpec, BucketState, Mode, PolicyKey, Take, Terms,
};
use redis::Commands;
use std::collections::HashMap;
use std::sync::LazyLock;

static POLICY: LazyLock<PolicyKey> = LazyLock::new(|| PolicyKey::new("leased"));
const CALLERS: [&str; 3] = ["alice", "bob", "carol"];

fn spec() -> BucketSpec {
    BucketSpec::new(40.0, 1733.0).unwrap()
}

fn take(who: &str, cost: f64, mode: Mode) -> Take<'static> {
    Take {
        key: BucketKey {
            policy: &POLICY,
            identity: Identity::of(&IdentityKey::from_bytes([0; 32]), "test", who.as_bytes()),
        },
        spec: spec(),
        cost,
        mode,
        terms: Terms::default(),
    }
}

/// The arithmetic's answer for `t` at `now`, and the state it leaves (`None`: nothing
/// stored, as Redis deletes a key with nothing to keep).
fn model(t: &Take<'_>, stored: Option<LeasedState>, now: u64) -> (Assessment, Option<LeasedState>) {
    let s = t.spec;
    let level = s.refill_leased(stored, now);
    let (answer, written) = match t.mode {
        Mode::Lease => s.lend(level, t.cost, now),
        Mode::Return { leased, window } => {
            let (a, after) = s.take_back(level, -t.cost, leased, window);
            (a, Some(after))
        }
        Mode::Settle => {
            let (a, after) = s.settle_leased(level, t.cost);
            (a, Some(after))
        }
        Mode::Enforce | Mode::Shadow => {
            let a = s.assess(level.bucket, t.cost, t.terms, now);
            let after = a.is_allowed().then(|| LeasedState {
                bucket: s.after_take(level.bucket, &a),
                ..level
            });
            (a, after)
        }
    };
    let state = match written {
        Some(w) if s.keep_leased_for_us(&w, now) == 0 => None,
        Some(w) => Some(w),
        None => stored,
    };
    (answer, state)
}

fn pack(state: &LeasedState) -> Vec<u8> {
    let b = state.bucket;
    let l = state.on_lease;
    [
        b.tokens,
        b.updated_us as f64,
        b.blocked_until_us as f64,
        l.window as f64,
        l.current,
        l.previous,
    ]
    .iter()
    .flat_map(|v| v.to_le_bytes())
    .collect()
}

fn unpack(bytes: &[u8]) -> LeasedState {
    let d: Vec<f64> = bytes
        .chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let bucket = BucketState {
        tokens: d[0],
        updated_us: d[1] as u64,
        blocked_until_us: d[2] as u64,
    };
    let on_lease = match d.len() {
        6 => OnLease {
            window: d[3] as u64,
            current: d[4],
            previous: d[5],
        },
        _ => OnLease::default(),
    };
    LeasedState { bucket, on_lease }
}

/// A stored state from `ago_us` before `now`, with tokens out on lease in its window and the
/// one before.
fn old_state(rng: &mut Lcg, now: u64, ago_us: u64) -> LeasedState {
    let then = now - ago_us;
    let (current, previous) = (rng.next(15) as f64 + 0.5, rng.next(10) as f64);
    LeasedState {
        bucket: BucketState {
            tokens: rng.next(10) as f64 + 0.25,
            updated_us: then,
            blocked_until_us: 0,
        },
        on_lease: OnLease {
            window: OnLease::window_of(then),
            current,
            previous,
        },
    }
}

#[test]
fn leases_in_lua_and_bucket_rs_agree_on_the_same_sequences() {
    let redis = RedisServer::start();
    let mut conn = redis.conn();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let store = store(&settings(redis.url()));
    let mut rng = Lcg(11);
    let mut states: HashMap<&str, Option<LeasedState>> = HashMap::new();
    let mut lent: Vec<(&str, f64, u64)> = Vec::new();
    let (mut leases, mut returns) = (0, 0);
    for step in 0..900 {
        let who = CALLERS[rng.next(3) as usize];
        let key = store.key(&take(who, 1.0, Mode::Enforce));
        if step % 60 == 0 {
            // Now and then the caller's key is an old state, 5 to 45 s in the past.
            let now: (u64, u64) = redis::cmd("TIME").query(&mut conn).unwrap();
            let now = now.0 * 1_000_000 + now.1;
            let ago = 5_000_000 + rng.next(40_000_000);
            let state = old_state(&mut rng, now, ago);
            let _: () = conn.set_ex(&key, pack(&state), 120).unwrap();
            states.insert(who, Some(state));
        }
        let t = match rng.next(7) {
            0 | 1 => take(who, 1.0 + rng.next(3) as f64, Mode::Enforce),
            2 | 3 => take(who, 1.0 + rng.next(12) as f64, Mode::Lease),
            4 | 5 if !lent.is_empty() => {
                let (owner, size, window) = lent.swap_remove(rng.next(lent.len() as u64) as usize);
                let late = [0, 0, 0, 1, 2][rng.next(5) as usize];
                let unspent = (size * rng.next(5) as f64 / 4.0).floor();
                let mode = Mode::Return {
                    leased: size,
                    window: window.saturating_sub(late),
                };
                returns += 1;
                take(owner, -unspent, mode)
            }
            _ => take(who, -(rng.next(4) as f64), Mode::Settle),
        };
        let owner = CALLERS
            .iter()
            .copied()
            .find(|c| take(c, 1.0, Mode::Enforce).key.identity == t.key.identity)
            .unwrap();
        let key = store.key(&t);
        let (now, from_lua) = runtime.block_on(store.call(&[t])).expect("script answers");
        let (expected, state) = model(&t, states.get(owner).copied().flatten(), now);
        assert_eq!(from_lua[0], expected, "step {step} at {now} µs: {t:?}");
        if t.mode == Mode::Lease && expected.is_allowed() {
            leases += 1;
            lent.push((owner, t.cost, OnLease::window_of(now)));
        }
        let raw: Option<Vec<u8>> = conn.get(&key).unwrap();
        match (&raw, &state) {
            (None, None) => {}
            (Some(raw), Some(state)) => {
                let stored = unpack(raw);
                assert_eq!(stored.bucket, state.bucket, "step {step}: {t:?}");
                if raw.len() == 48 {
                    assert_eq!(stored.on_lease, state.on_lease, "step {step}: {t:?}");
                } else {
                    assert_eq!(state.on_lease.total(), 0.0, "step {step}: {t:?}");
                }
            }
            _ => panic!("step {step}: Redis holds {raw:?}, the arithmetic {state:?}"),
        }
        states.insert(owner, state);
    }
    assert!(
        leases > 100 && returns > 100,
        "{leases} leases, {returns} returns"
    );
    assert_eq!(LEASE_WINDOW_US, 20_000_000, "lua/take.lua's WINDOW");
}
