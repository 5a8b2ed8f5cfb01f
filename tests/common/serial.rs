//! Tests that measure time or load the machine on purpose hold [`alone`]: one at a time
//! within a test binary, and on the whole machine apart from what loads it heavily in other
//! binaries (the test binaries run two at a time: `scripts/test-binaries`). Such heavy work
//! (a headless Chromium) holds [`beside`]: many at once, never while an `alone` test runs.
//! Both are file locks (`flock`) under the system's temporary directory, so every checkout
//! and worktree on the machine shares them; a waiting `alone` stops new `beside` holders
//! from starting (a turnstile), so a busy browser lane cannot starve it.

use nix::fcntl::{Flock, FlockArg};
use std::cell::Cell;
use std::fs::{File, OpenOptions};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

static ALONE: Mutex<()> = Mutex::new(());

thread_local! {
    /// Whether this thread holds [`alone`] (its own heavy work then needs no `beside`).
    static HOLDS_ALONE: Cell<bool> = const { Cell::new(false) };
}

/// The machine to one test: held while it lives.
pub struct Alone {
    _machine: Flock<File>,
    _binary: MutexGuard<'static, ()>,
}

impl Drop for Alone {
    fn drop(&mut self) {
        HOLDS_ALONE.with(|h| h.set(false));
    }
}

/// Held for as long as the caller loads the machine or times something: no other holder runs
/// meanwhile, in this binary or any other, nor any [`beside`] holder. A test that panicked
/// while holding it leaves it usable.
pub fn alone() -> Alone {
    let binary = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let turnstile = lock(open("turnstile"), FlockArg::LockExclusive);
    let machine = lock(open("machine"), FlockArg::LockExclusive);
    drop(turnstile);
    HOLDS_ALONE.with(|h| h.set(true));
    Alone {
        _machine: machine,
        _binary: binary,
    }
}

/// Held by heavy work that measures nothing (a browser run): it runs beside other such work
/// but never beside an [`alone`] test. `None` when this thread is the `alone` test itself; a
/// thread the `alone` test spawned is not, and would wait for it: an `alone` test runs its
/// browser on its own thread.
pub fn beside() -> Option<Flock<File>> {
    if HOLDS_ALONE.with(Cell::get) {
        return None;
    }
    drop(lock(open("turnstile"), FlockArg::LockExclusive));
    Some(lock(open("machine"), FlockArg::LockShared))
}

fn open(name: &str) -> File {
    let dir: PathBuf = std::env::temp_dir().join("floodgate-tests");
    std::fs::create_dir_all(&dir).expect("the lock directory");
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(format!("{name}.lock")))
        .expect("a lock file")
}

fn lock(file: File, how: FlockArg) -> Flock<File> {
    Flock::lock(file, how).unwrap_or_else(|(_, e)| panic!("flock: {e}"))
}
