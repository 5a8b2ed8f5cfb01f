//! What keeping a request's decision costs (`[decisions]`): builds the record a throttled
//! request leaves (as `proxy/explained.rs` does: its reference from the request id, its path,
//! its pool's name, one policy, the caller, the bucket) and keeps it in a book of the default
//! size with no Redis, `N` times after filling the ring (so each keep also lets go of the
//! oldest record); prints the heap allocations per record. Instructions per record come from
//! running it under `valgrind --tool=callgrind` at two `N` and dividing the difference.
//! `cargo run --example decisions_cost [N]`.

use floodgate::explain::{
    kept_path, Bucket, Caller, DecisionSettings, Decisions, Record, Reference, Said, Step,
};
use floodgate::identity::{Identity, IdentityKey};
use floodgate::telemetry::{PolicyOutcome, RequestDecision};
use smallvec::smallvec;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// The system's allocator, counting allocations.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is passed on to the system's allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// What the proxy holds when a request ends: its id, its pool's name, the policy and source.
struct Request {
    ids: Vec<String>,
    pool: Arc<str>,
    policy: Arc<str>,
    source: Arc<str>,
    digest: Identity,
}

/// Keeps the decision of request `i` in `book`, the way `proxy/explained.rs` builds it.
fn keep(book: &Decisions, request: &Request, i: usize) {
    let Some(reference) = Reference::of_request_id(request.ids[i].as_bytes()) else {
        return;
    };
    let now_ms = 1_800_000_000_000 + i as u64;
    let record = Record {
        reference,
        at_ms: now_ms,
        method: http::Method::GET,
        path: kept_path("/api/items/42"),
        route: Some(request.pool.clone()),
        steps: smallvec![Step {
            policy: request.policy.clone(),
            said: Said::Counted(PolicyOutcome::Throttled),
            remaining: Some(0.0),
        }],
        caller: Some(Caller {
            source: Some(request.source.clone()),
            digest: request.digest,
        }),
        bucket: Some(Bucket {
            capacity: 5,
            cost: 1,
            before: 0.0,
            after: 0.0,
            retry_after_s: Some(1),
        }),
        bot: None,
        ja4: None,
        h2fp: None,
        score: None,
        pass: None,
        proof: None,
        privacy_pass: false,
        robots: None,
        overload: None,
        blocked_by: None,
        decision: Some(RequestDecision::Throttled),
        status: 429,
    };
    book.keep(record, now_ms);
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let settings = DecisionSettings::default();
    let book = Decisions::new("i1", &settings, None);
    let fill = settings.keep;
    let request = Request {
        ids: (0..fill + n)
            .map(|i| format!("{:032x}", i as u128 * 0x9e37_79b9_7f4a_7c15))
            .collect(),
        pool: Arc::from("api"),
        policy: Arc::from("per-key"),
        source: Arc::from("header:x-api-key"),
        digest: Identity::of(&IdentityKey::from_bytes([1; 32]), "header:x-api-key", b"k"),
    };
    (0..fill).for_each(|i| keep(&book, &request, i));
    let before = ALLOCATIONS.load(Relaxed);
    (fill..fill + n).for_each(|i| keep(&book, &request, i));
    let allocations = ALLOCATIONS.load(Relaxed) - before;
    println!(
        "{n} records kept (ring of {}): {:.2} allocations a record",
        book.len(),
        allocations as f64 / n as f64
    );
}
