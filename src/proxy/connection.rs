//! Downstream connections: the limits that hold them.
//!
//! A head must be whole within `header_timeout` of its first byte (of the connection's accept,
//! for the first request) and within `max_header_bytes`; between requests a connection may
//! idle for `keepalive_timeout`. The listener's sweep enforces both deadlines (`head_watch`),
//! the connection's [`WatchedStream`](super::WatchedStream) the size, and the proxy marks the
//! head complete and the request done.

use pingora::proxy::Session;
use std::time::{Duration, Instant};

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
    /// Whether `max_connections` was written in the config: a written cap lowered to fit the
    /// open-file limit is worth a warning, the default lowered is not.
    pub max_connections_set: bool,
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
            max_connections_set: false,
            max_connections_per_ip: None,
        }
    }
}

impl ConnectionLimits {
    /// Whether connections stay open between requests (a `keepalive_timeout` above zero).
    pub fn keeps_alive(&self) -> bool {
        !self.keepalive_timeout.is_zero()
    }
}

/// Marks the head of `session`'s request complete, if its connection is watched.
pub(super) fn head_complete(session: &Session) {
    if let Some(watch) = super::watched::head_watch(session.as_downstream()) {
        watch.complete();
    }
}

/// Marks `session`'s request done, if its connection is watched: the connection idles from
/// now until the next head. A request body not read whole would be drained before that head,
/// unwatched, so such a connection closes instead (as pingora closes one whose response
/// went out before the body was in).
pub(super) fn request_done(session: &mut Session) {
    if !session.as_downstream_mut().is_body_done() {
        session.set_keepalive(None);
    } else if let Some(watch) = super::watched::head_watch(session.as_downstream()) {
        watch.request_done(Instant::now());
    }
}
