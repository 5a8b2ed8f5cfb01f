//! Downstream connections: the limits that hold them, and what the listener and the proxy know
//! of the request head under way on one HTTP/1 connection (a [`HeadWatch`]).
//!
//! A head must be whole within `header_timeout` of its first byte (of the connection's accept,
//! for the first request) and within `max_header_bytes`; between requests a connection may
//! idle for `keepalive_timeout`. The listener enforces the deadline, the connection's
//! [`WatchedStream`](super::WatchedStream) the size, and the proxy marks the head complete.

use parking_lot::Mutex;
use pingora::proxy::Session;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

/// How long downstream connections may take and how many may be open (`[server]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// A whole request head must arrive within this of its first byte; else the connection
    /// is closed.
    pub header_timeout: Duration,
    /// How long a connection may idle between requests; zero closes it after each response.
    pub keepalive_timeout: Duration,
    /// The largest request head, in bytes; a larger one is answered 431.
    pub max_header_bytes: usize,
    /// The most connections open at once; more are closed as soon as they are accepted.
    pub max_connections: usize,
    /// The most connections open at once from one client address (an IPv6 /64).
    pub max_connections_per_ip: Option<usize>,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            keepalive_timeout: Duration::from_secs(60),
            max_header_bytes: 64 * 1024,
            max_connections: 10_000,
            max_connections_per_ip: None,
        }
    }
}

impl ConnectionLimits {
    /// Pingora's keep-alive setting: idle whole seconds (rounded up), or `None` to close after
    /// each response.
    pub fn keepalive_seconds(&self) -> Option<u64> {
        let d = self.keepalive_timeout;
        (!d.is_zero()).then(|| d.as_secs() + u64::from(d.subsec_nanos() > 0))
    }
}

#[derive(Debug)]
struct HeadState {
    /// When the head's first byte arrived (the accept, for a connection's first request).
    started: Option<Instant>,
    /// Bytes read since then, while the head was incomplete.
    bytes: usize,
    /// Whether the proxy has the whole head.
    complete: bool,
    /// Requests begun on this connection.
    requests: u64,
}

/// The request head under way on one HTTP/1 connection.
#[derive(Debug)]
pub struct HeadWatch {
    state: Mutex<HeadState>,
    first_byte: Notify,
}

impl HeadWatch {
    /// The watch of a connection accepted now: its first head's clock is running.
    pub fn accepted() -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(HeadState {
                started: Some(Instant::now()),
                bytes: 0,
                complete: false,
                requests: 0,
            }),
            first_byte: Notify::new(),
        })
    }

    /// The watch of a connection whose heads are not watched (HTTP/2 frames its own): the
    /// head counts as complete, so reads pass through.
    pub fn unwatched() -> Arc<Self> {
        let watch = Self::accepted();
        watch.complete();
        watch
    }

    /// A new request begins: on a reused connection, its head's clock starts at its first byte.
    pub fn expect_head(&self) {
        let mut state = self.state.lock();
        if state.requests > 0 {
            state.started = None;
        }
        state.requests += 1;
        state.bytes = 0;
        state.complete = false;
    }

    /// How many more head bytes may be read; `None` once the head is complete.
    pub(super) fn allowance(&self, max: usize) -> Option<usize> {
        let state = self.state.lock();
        (!state.complete).then(|| max.saturating_sub(state.bytes))
    }

    /// `n` bytes of the incomplete head were read.
    pub(super) fn read(&self, n: usize) {
        let mut state = self.state.lock();
        state.bytes += n;
        if n > 0 && state.started.is_none() {
            state.started = Some(Instant::now());
            self.first_byte.notify_one();
        }
    }

    /// The proxy has the whole head.
    pub(super) fn complete(&self) {
        self.state.lock().complete = true;
    }

    /// Resolves when the head under way has not been complete within `timeout` of its first
    /// byte; never, once it is complete.
    pub async fn overdue(&self, timeout: Duration) {
        let started = loop {
            let first_byte = self.first_byte.notified();
            if let Some(started) = self.state.lock().started {
                break started;
            }
            first_byte.await;
        };
        tokio::time::sleep_until(started + timeout).await;
        if self.state.lock().complete {
            std::future::pending::<()>().await;
        }
    }
}

/// Marks the head of `session`'s request complete, if its connection is watched.
pub(super) fn head_complete(session: &Session) {
    if let Some(watch) = super::watched::head_watch(session.as_downstream()) {
        watch.complete();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keepalive_is_whole_seconds_or_off() {
        let limits = |ms| ConnectionLimits {
            keepalive_timeout: Duration::from_millis(ms),
            ..ConnectionLimits::default()
        };
        assert_eq!(limits(60_000).keepalive_seconds(), Some(60));
        assert_eq!(limits(1_500).keepalive_seconds(), Some(2));
        assert_eq!(limits(0).keepalive_seconds(), None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_head_is_overdue_its_timeout_after_its_first_byte() {
        let watch = HeadWatch::accepted();
        watch.expect_head();
        let timeout = Duration::from_secs(10);
        // The first request's clock runs from the accept.
        assert!(
            tokio::time::timeout(Duration::from_secs(11), watch.overdue(timeout))
                .await
                .is_ok()
        );
        // A reused connection idles without a deadline until a byte arrives.
        watch.complete();
        watch.expect_head();
        assert!(
            tokio::time::timeout(Duration::from_secs(100), watch.overdue(timeout))
                .await
                .is_err()
        );
        watch.read(1);
        assert_eq!(watch.allowance(5), Some(4));
        let started = Instant::now();
        watch.overdue(timeout).await;
        assert_eq!(started.elapsed(), timeout);
        // A complete head is never overdue.
        watch.complete();
        assert_eq!(watch.allowance(5), None);
        assert!(
            tokio::time::timeout(Duration::from_secs(100), watch.overdue(timeout))
                .await
                .is_err()
        );
    }
}
