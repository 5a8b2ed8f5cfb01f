//! What a request id costs (issue #82): the id the proxy made before (a process prefix and a
//! SplitMix-permuted counter, parsed back into a reference when the request's decision was
//! kept) against the one it makes now (128 bits from the thread's ChaCha generator, the
//! reference made with it: `Reference::own`). Both include the header value's allocation.
//! Each round times a batch of each, the order alternating; prints the median over rounds and
//! the spread, in ns per id. `cargo run --release --example request_id_cost [rounds]`.

use floodgate::explain::Reference;
use http::HeaderValue;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

const BATCH: u32 = 200_000;
const DIGITS: &[u8; 16] = b"0123456789abcdef";
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// `n` as lowercase hex digits filling `out`.
fn hex(n: u64, out: &mut [u8]) {
    for (i, digit) in out.iter_mut().rev().enumerate() {
        *digit = DIGITS[((n >> (4 * i)) & 0xf) as usize];
    }
}

/// SplitMix64's finaliser, as the old id used it.
fn permute(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The old id, and its reference parsed back as the decision's keeping did.
fn old(prefix: u64, key: u64) -> (HeaderValue, Option<Reference>) {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut text = [0u8; 32];
    hex(prefix, &mut text[..16]);
    hex(permute(n ^ key), &mut text[16..]);
    let value = HeaderValue::from_bytes(&text).unwrap_or(HeaderValue::from_static("0"));
    let reference = Reference::of_request_id(value.as_bytes());
    (value, reference)
}

/// The new id and its reference, made together.
fn new() -> (HeaderValue, Reference) {
    let (reference, text) = Reference::own(rand::random());
    let value = HeaderValue::from_bytes(&text).unwrap_or(HeaderValue::from_static("fg-"));
    (value, reference)
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|r| r.parse().ok())
        .unwrap_or(21);
    let (prefix, key) = (0x0123_4567_89ab_cdef, 0xfeed_beef_dead_f00d);
    let time = |make_old: bool| {
        let start = Instant::now();
        for _ in 0..BATCH {
            match make_old {
                true => drop(black_box(old(prefix, key))),
                false => drop(black_box(new())),
            }
        }
        start.elapsed().as_nanos() as f64 / f64::from(BATCH)
    };
    let (mut before, mut after) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        if round % 2 == 0 {
            before.push(time(true));
            after.push(time(false));
        } else {
            after.push(time(false));
            before.push(time(true));
        }
    }
    println!("ns per id | median | min–max");
    for (name, mut ns) in [
        ("a counter, parsed back", before),
        ("128 random bits, not parsed", after),
    ] {
        ns.sort_by(f64::total_cmp);
        let (median, low, high) = (ns[ns.len() / 2], ns[0], ns[ns.len() - 1]);
        println!("{name} | {median:.1} | {low:.1}–{high:.1}");
    }
}
