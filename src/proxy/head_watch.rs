//! The deadlines of downstream HTTP/1 connections, without a timer per request: each
//! connection's [`HeadWatch`] notes where it stands (idle between requests, a head under way,
//! a request being served) and since when, and one sweep over all of them (the listener's
//! [`HeadWatches`], every [`SWEEP_EVERY`]) closes those past their deadline: a head not whole
//! within `header_timeout` of its first byte (of the accept, for the first request), or an idle
//! wait longer than `keepalive_timeout`. A deadline is never cut short; it may run up to one
//! sweep long.
//!
//! Pingora would arm a timer (a lock and an allocation) on every head read for its keep-alive
//! timeout, and a head deadline needs a second: one sweep four times a second replaces both.

use parking_lot::Mutex;
use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

/// How often the connections' deadlines are checked.
pub const SWEEP_EVERY: Duration = Duration::from_millis(250);

/// Where a connection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for the first byte of its next request (`keepalive_timeout` applies).
    Idle,
    /// A request head under way (`header_timeout` applies).
    Head,
    /// The head is whole; the request is being served (no deadline here).
    Served,
}

#[derive(Debug)]
struct HeadState {
    phase: Phase,
    /// When the phase began.
    since: Instant,
    /// Head bytes read in this phase.
    bytes: usize,
    /// The task serving the connection, to wake when it expires.
    waker: Option<Waker>,
    /// A head the server answered before it was whole: refused by the parser or too large.
    refused: Option<RefusedHead>,
}

/// A request head answered (400, 431) before it was whole, as far as it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedHead {
    /// The status answered.
    pub status: u16,
    /// The head's first bytes (at most [`REFUSED_HEAD_BYTES`]).
    pub head: Box<[u8]>,
}

/// How much of a refused head is kept for its access-log line.
pub const REFUSED_HEAD_BYTES: usize = 256;

impl HeadState {
    /// Whether the phase has outlasted its deadline at `now`.
    fn overdue(&self, now: Instant, deadlines: &Deadlines) -> bool {
        let limit = match self.phase {
            Phase::Idle => deadlines.idle,
            Phase::Head => deadlines.head,
            Phase::Served => return false,
        };
        now.saturating_duration_since(self.since) > limit
    }
}

/// The request head under way on one HTTP/1 connection.
#[derive(Debug)]
pub struct HeadWatch {
    state: Mutex<HeadState>,
    /// Whether a sweep found the connection past its deadline (read without the lock on
    /// every poll of the connection's task).
    expired: AtomicBool,
}

impl HeadWatch {
    fn new(phase: Phase, now: Instant) -> Self {
        Self {
            state: Mutex::new(HeadState {
                phase,
                since: now,
                bytes: 0,
                waker: None,
                refused: None,
            }),
            expired: AtomicBool::new(false),
        }
    }

    /// The watch of a connection whose heads are not watched (HTTP/2 frames its own): reads
    /// pass through, and no sweep closes it.
    pub fn unwatched() -> Arc<Self> {
        Arc::new(Self::new(Phase::Served, Instant::now()))
    }

    /// A request ended at `now`, its body read whole: the connection idles until the next
    /// head's first byte.
    pub fn request_done(&self, now: Instant) {
        let mut state = self.state.lock();
        state.phase = Phase::Idle;
        state.since = now;
        state.bytes = 0;
    }

    /// How many more head bytes may be read; `None` once the head is whole.
    pub(super) fn allowance(&self, max: usize) -> Option<usize> {
        let state = self.state.lock();
        (state.phase != Phase::Served).then(|| max.saturating_sub(state.bytes))
    }

    /// `n` bytes of the head were read at `now`; the first starts its clock.
    pub(super) fn read(&self, n: usize, now: impl FnOnce() -> Instant) {
        let mut state = self.state.lock();
        state.bytes += n;
        if n > 0 && state.phase == Phase::Idle {
            state.phase = Phase::Head;
            state.since = now();
        }
    }

    /// The server has the whole head.
    pub fn complete(&self) {
        self.state.lock().phase = Phase::Served;
    }

    /// The server is answering with `status`: if no head was whole yet, it refused the head
    /// whose first bytes are `head`, and that is kept (once) for [`Self::take_refused`].
    pub(super) fn answering(&self, status: u16, head: &[u8]) {
        let mut state = self.state.lock();
        if state.phase != Phase::Served && state.refused.is_none() {
            let head = head[..head.len().min(REFUSED_HEAD_BYTES)].into();
            state.refused = Some(RefusedHead { status, head });
        }
    }

    /// The head the server refused before it was whole, if it did.
    pub fn take_refused(&self) -> Option<RefusedHead> {
        self.state.lock().refused.take()
    }

    /// Resolves once a sweep has found the connection past its deadline. Polled on every
    /// wake of the connection's task: the lock is taken only when the task's waker changes.
    pub async fn expired(&self) {
        let mut registered: Option<Waker> = None;
        poll_fn(|cx| {
            if self.expired.load(Ordering::Acquire) {
                return Poll::Ready(());
            }
            if !registered.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                let waker = cx.waker().clone();
                self.state.lock().waker = Some(waker.clone());
                registered = Some(waker);
                // A sweep between the first check and the registration found no waker.
                if self.expired.load(Ordering::Acquire) {
                    return Poll::Ready(());
                }
            }
            Poll::Pending
        })
        .await
    }

    /// Expires the connection if it is past its deadline at `now`.
    fn sweep(&self, now: Instant, deadlines: &Deadlines) {
        let mut state = self.state.lock();
        if !self.expired.load(Ordering::Relaxed) && state.overdue(now, deadlines) {
            self.expired.store(true, Ordering::Release);
            if let Some(waker) = state.waker.take() {
                waker.wake();
            }
        }
    }
}

/// How long each phase may last.
#[derive(Debug, Clone, Copy)]
struct Deadlines {
    head: Duration,
    idle: Duration,
}

/// The watched connections of one listener, swept together.
#[derive(Debug)]
pub struct HeadWatches {
    deadlines: Deadlines,
    watched: Mutex<Vec<Weak<HeadWatch>>>,
}

impl HeadWatches {
    /// Watches whose heads must be whole within `header_timeout` and whose idle waits end
    /// after `keepalive_timeout`.
    pub fn new(header_timeout: Duration, keepalive_timeout: Duration) -> Arc<Self> {
        Arc::new(Self {
            deadlines: Deadlines {
                head: header_timeout,
                idle: keepalive_timeout,
            },
            watched: Mutex::new(Vec::new()),
        })
    }

    /// The watch of a connection accepted now: its first head's clock is running.
    pub fn accepted(&self) -> Arc<HeadWatch> {
        let watch = Arc::new(HeadWatch::new(Phase::Head, Instant::now()));
        self.watched.lock().push(Arc::downgrade(&watch));
        watch
    }

    /// Expires every connection past its deadline at `now`, and forgets closed ones; the list
    /// is not held locked meanwhile, so accepts go on.
    pub fn sweep(&self, now: Instant) {
        let mut list = std::mem::take(&mut *self.watched.lock());
        list.retain(|watch| match watch.upgrade() {
            Some(watch) => {
                watch.sweep(now, &self.deadlines);
                true
            }
            None => false,
        });
        self.watched.lock().append(&mut list);
    }
}

#[cfg(test)]
mod tests;
