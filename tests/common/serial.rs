//! Tests that load the machine or measure latency run one at a time within a test binary;
//! the others still run beside them (two at a time, as many as the cores).

use std::sync::{Mutex, MutexGuard};

static ALONE: Mutex<()> = Mutex::new(());

/// Held for as long as the caller loads the machine or times something: no other holder runs
/// meanwhile. A test that panicked while holding it leaves it usable.
pub fn alone() -> MutexGuard<'static, ()> {
    ALONE.lock().unwrap_or_else(|e| e.into_inner())
}
