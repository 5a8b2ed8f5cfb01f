//! How late the proxy's runtime runs a task that became ready: a ticker sleeps 5 ms at a time
//! and notes how late it woke (an average over the last fifth of a second or so; the timer's
//! own millisecond steps make about 1 ms of it on an idle host). A busy proxy host delays
//! every answer it reads, and spreads the answers' latency with it: while it is late, the
//! adaptive limit allows the answers no spread (it cannot tell the host's from the backend's).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// How long the ticker sleeps.
const TICK: Duration = Duration::from_millis(5);
/// A host whose ticker wakes later than this on average is late. Tokio's timer and the
/// system's poll count whole milliseconds, rounded up: an idle host reads about 1.1 ms here, a
/// debug build under a swarm that takes both cores 2.8 to 3.7 ms.
const LATE_US: f64 = 2_000.0;
/// The weight of a new reading in the averages (about the last 32 ticks).
const WEIGHT: f64 = 1.0 / 32.0;

/// Whether the proxy host runs its tasks on time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Host {
    /// On time (or not watched yet).
    Quiet,
    /// Late: answers are delayed by the host as well as the backend.
    Late,
}

/// The average lateness, in microseconds (f64 bits: one writer).
struct Lateness {
    watching: AtomicBool,
    mean_us: AtomicU64,
}

static LATENESS: Lateness = Lateness {
    watching: AtomicBool::new(false),
    mean_us: AtomicU64::new(0),
};

/// Starts the ticker on the runtime this is called from, once per process (a request's task:
/// the proxy's own runtime). Outside a runtime it does nothing.
pub(super) fn watch() {
    if LATENESS.watching.load(Ordering::Relaxed) {
        return;
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    if LATENESS.watching.swap(true, Ordering::Relaxed) {
        return;
    }
    runtime.spawn(async {
        loop {
            let due = tokio::time::Instant::now() + TICK;
            tokio::time::sleep_until(due).await;
            let late = tokio::time::Instant::now().saturating_duration_since(due);
            note(late.as_micros() as f64);
        }
    });
}

fn note(late_us: f64) {
    let old = f64::from_bits(LATENESS.mean_us.load(Ordering::Relaxed));
    let new = old + WEIGHT * (late_us - old);
    LATENESS.mean_us.store(new.to_bits(), Ordering::Relaxed);
}

/// Whether the proxy host runs its tasks late now.
pub(super) fn host() -> Host {
    let mean_us = f64::from_bits(LATENESS.mean_us.load(Ordering::Relaxed));
    match mean_us > LATE_US {
        true => Host::Late,
        false => Host::Quiet,
    }
}
