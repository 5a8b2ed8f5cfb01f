//! Reading a bucket without taking from it: what an operator's inspect call shows, computed
//! with the same arithmetic a take uses (`bucket.rs`, leases included), so what it says is
//! what the caller's next request sees.

use crate::bucket::{BucketSpec, BucketState, LeasedState, OnLease};

/// How a bucket stands at one instant, nothing taken.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Peek {
    /// Tokens the bucket holds (fractional; below zero while in debt).
    pub remaining: f64,
    /// Microseconds until it is full again.
    pub full_in_us: u64,
    /// Microseconds a penalty block still refuses every take; 0 for none.
    pub blocked_for_us: u64,
}

impl Peek {
    /// The bucket of `spec` stored as `stored` (`None`: never stored, so full), at `now_us`.
    pub fn of(spec: &BucketSpec, stored: Option<LeasedState>, now_us: u64) -> Self {
        let level = spec.refill_leased(stored, now_us);
        let tokens = level.bucket.tokens;
        Self {
            remaining: tokens,
            full_in_us: spec.micros_to_gain(spec.capacity() - tokens, now_us),
            blocked_for_us: level.bucket.blocked_until_us.saturating_sub(now_us),
        }
    }

    /// A bucket as `lua/take.lua` stores it: two, three or six little-endian doubles (tokens,
    /// time, block end, then lease window, lent now, lent before). `None` for anything else.
    pub fn decode(raw: &[u8]) -> Option<LeasedState> {
        let doubles: Vec<f64> = raw
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        let bucket = |tokens: f64, at: f64, blocked: f64| BucketState {
            tokens,
            updated_us: at as u64,
            blocked_until_us: blocked as u64,
        };
        let plain = |state: BucketState| LeasedState {
            on_lease: OnLease {
                window: OnLease::window_of(state.updated_us),
                ..OnLease::default()
            },
            bucket: state,
        };
        match (raw.len() % 8, doubles.as_slice()) {
            (0, [tokens, at]) => Some(plain(bucket(*tokens, *at, 0.0))),
            (0, [tokens, at, blocked]) => Some(plain(bucket(*tokens, *at, *blocked))),
            (0, [tokens, at, blocked, window, current, previous]) => Some(LeasedState {
                bucket: bucket(*tokens, *at, *blocked),
                on_lease: OnLease {
                    window: *window as u64,
                    current: *current,
                    previous: *previous,
                },
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> BucketSpec {
        BucketSpec::new(10.0, 2.0).unwrap()
    }

    #[test]
    fn a_bucket_never_stored_is_full() {
        let peek = Peek::of(&spec(), None, 5_000_000);
        assert_eq!(peek.remaining, 10.0);
        assert_eq!(peek.full_in_us, 0);
        assert_eq!(peek.blocked_for_us, 0);
    }

    #[test]
    fn a_stored_bucket_is_refilled_to_now_and_its_block_counted() {
        let raw: Vec<u8> = [4.0f64, 1_000_000.0, 9_000_000.0]
            .iter()
            .flat_map(|d| d.to_le_bytes())
            .collect();
        let stored = Peek::decode(&raw);
        let peek = Peek::of(&spec(), stored, 2_000_000);
        assert_eq!(peek.remaining, 6.0);
        assert_eq!(peek.full_in_us, 2_000_000);
        assert_eq!(peek.blocked_for_us, 7_000_000);
    }

    #[test]
    fn what_is_out_on_lease_keeps_the_bucket_below_capacity() {
        let raw: Vec<u8> = [0.0f64, 1_000_000.0, 0.0, 0.0, 3.0, 0.0]
            .iter()
            .flat_map(|d| d.to_le_bytes())
            .collect();
        let peek = Peek::of(&spec(), Peek::decode(&raw), 60_000_000);
        assert_eq!(
            peek.remaining, 10.0,
            "two windows later the lease is forgotten"
        );
        let peek = Peek::of(&spec(), Peek::decode(&raw), 11_000_000);
        assert_eq!(peek.remaining, 7.0, "capacity minus what is out");
    }

    #[test]
    fn a_value_of_another_shape_is_not_a_bucket() {
        assert_eq!(Peek::decode(b"hello"), None);
        assert_eq!(Peek::decode(&[0u8; 32]), None);
    }
}
