//! Waiting on a condition instead of sleeping a fixed time: poll until it holds or a limit
//! passes.

use std::time::{Duration, Instant};

/// How often a condition is asked again.
const POLL: Duration = Duration::from_millis(20);

/// Asks `done` every 20 ms while less than `limit` has passed; how long it took to hold, or
/// `None` if it did not hold within `limit`.
pub fn within(limit: Duration, mut done: impl FnMut() -> bool) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if done() {
            return Some(started.elapsed());
        }
        std::thread::sleep(POLL);
    }
    None
}

/// Like `within`, asking once more when `limit` has passed; whether `done` held.
pub fn eventually(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    within(limit, &mut done).is_some() || done()
}
