//! Request ids: the one a request carries in `server.request_id_header`, kept when it may be
//! believed, else a fresh one.
//!
//! The rule: a value from a trusted proxy (`identity.ip.trusted_proxies`) is kept when it is one
//! line of 1 to 1024 visible ASCII characters; a value from anyone else is kept only when it is
//! 1 to 128 characters of letters, digits and `-_.:+/=@`. Otherwise (absent, repeated, empty,
//! too long, other characters) the proxy makes one: 32 lowercase hex digits, unique in the
//! process and not guessable from one another.

use http::{HeaderMap, HeaderName, HeaderValue};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::LazyLock;

/// The longest id a client that is not a trusted proxy may choose.
pub(super) const MAX_UNTRUSTED: usize = 128;
/// The longest id a trusted proxy may pass on.
pub(super) const MAX_TRUSTED: usize = 1024;

/// Whether `value` may be kept as the request id, coming from a peer `trusted` or not.
pub(super) fn acceptable(value: &[u8], trusted: bool) -> bool {
    let (max, allowed): (usize, fn(u8) -> bool) = match trusted {
        true => (MAX_TRUSTED, |b| b.is_ascii_graphic() || b == b' '),
        false => (MAX_UNTRUSTED, |b| {
            b.is_ascii_alphanumeric() || b"-_.:+/=@".contains(&b)
        }),
    };
    !value.is_empty()
        && value.len() <= max
        && value.iter().copied().all(allowed)
        && value.first() != Some(&b' ')
        && value.last() != Some(&b' ')
}

/// The request's id: the one in `headers` under `name` if it may be kept, else a new one.
pub(super) fn of(headers: &HeaderMap, name: &HeaderName, trusted: bool) -> HeaderValue {
    let mut values = headers.get_all(name).iter();
    match (values.next(), values.next()) {
        (Some(value), None) if acceptable(value.as_bytes(), trusted) => value.clone(),
        _ => generate(),
    }
}

/// A fresh id: a counter run through a keyed 64-bit permutation (so ids never repeat within
/// a process yet do not reveal how many requests came before), after a random process prefix.
pub(super) fn generate() -> HeaderValue {
    static KEYS: LazyLock<(u64, u64)> = LazyLock::new(|| {
        let mut seed = [0u8; 16];
        // Without the OS's randomness, the time still sets processes apart.
        if getrandom::fill(&mut seed).is_err() {
            let nanos = crate::clock::wall_now_ns();
            seed = (nanos ^ u128::from(std::process::id()) << 64).to_le_bytes();
        }
        let (prefix, key) = seed.split_at(8);
        let word = |b: &[u8]| b.try_into().map_or(0, u64::from_le_bytes);
        (word(prefix), word(key))
    });
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let (prefix, key) = *KEYS;
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut text = [0u8; 32];
    hex(prefix, &mut text[..16]);
    hex(permute(n ^ key), &mut text[16..]);
    // Hex digits are always a valid header value.
    HeaderValue::from_bytes(&text).unwrap_or(HeaderValue::from_static("0"))
}

/// `n` as lowercase hex digits filling `out` (16 for a whole `u64`).
fn hex(n: u64, out: &mut [u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (i, digit) in out.iter_mut().rev().enumerate() {
        *digit = DIGITS[((n >> (4 * i)) & 0xf) as usize];
    }
}

/// SplitMix64's finaliser: a bijection on `u64`, so distinct inputs give distinct outputs.
fn permute(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append("x-request-id", HeaderValue::from_str(v).unwrap());
        }
        map
    }

    #[test]
    fn a_well_formed_id_is_kept_and_a_bad_one_replaced() {
        let name = HeaderName::from_static("x-request-id");
        let kept = of(&headers(&["abc-123_x.y:z"]), &name, false);
        assert_eq!(kept, "abc-123_x.y:z");
        for bad in ["has space", "semi;colon", "quote\"", &"a".repeat(129)] {
            let id = of(&headers(&[bad]), &name, false);
            assert_ne!(id, bad);
            assert_eq!(id.len(), 32);
        }
        // Two values are one too many.
        assert_eq!(of(&headers(&["a", "b"]), &name, false).len(), 32);
        assert_eq!(of(&HeaderMap::new(), &name, false).len(), 32);
    }

    #[test]
    fn a_trusted_proxy_may_pass_on_longer_and_freer_ids() {
        let name = HeaderName::from_static("x-request-id");
        let long = "a b;c".repeat(100);
        assert_eq!(of(&headers(&[&long]), &name, true), long.as_str());
        assert_ne!(of(&headers(&[&long]), &name, false), long.as_str());
        assert_ne!(of(&headers(&[&"a".repeat(1025)]), &name, true).len(), 1025);
    }

    #[test]
    fn generated_ids_differ() {
        let ids: std::collections::HashSet<_> = (0..1000).map(|_| generate()).collect();
        assert_eq!(ids.len(), 1000);
        assert!(ids.iter().all(|id| id.len() == 32));
        let digits = |id: &HeaderValue| {
            id.as_bytes()
                .iter()
                .all(|b| b"0123456789abcdef".contains(b))
        };
        assert!(ids.iter().all(digits));
        let mut out = [0u8; 16];
        hex(0x0123_4567_89ab_cdef, &mut out);
        assert_eq!(&out, b"0123456789abcdef");
    }
}
