//! A slot stays taken while the backend works, whatever the client does. When the client goes
//! away (an HTTP/1 reset, an HTTP/2 `RST_STREAM`) before the backend's answer has ended,
//! pingora closes its connection to the backend; that does not stop the backend's work (a
//! thread-per-request server finishes the request all the same). So while a request holds a
//! slot (the pool's `[overload]` one, or a policy's `max_in_flight`), Floodgate keeps a second
//! handle on its HTTP/1 connection to the backend, a duplicate of the socket taken when pingora
//! connects (`pidfd_getfd` on its own process: no unsafe code, one system call). When the
//! client leaves first, a task half-closes the connection (no further request will come, so a
//! keep-alive backend closes it once its answer is written), reads and discards whatever the
//! backend still sends until it closes the connection, or until `read_timeout` has passed
//! since the client left, and only then gives the slots back. An HTTP/2 backend shares its
//! connection among requests: pingora resets the stream (`RST_STREAM(CANCEL)`, the protocol's
//! cancellation) and its slot goes back at once.

use crate::gate::Aftercare;
use crate::overload::Permit;
use pingora::{Error, ErrorSource};
use std::os::fd::{OwnedFd, RawFd};
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// The wait for a backend's answer when pingora was given no `read_timeout` (the config's
/// default).
const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(60);

/// A second handle on a request's HTTP/1 connection to its backend.
pub(super) struct Line {
    socket: OwnedFd,
    read_timeout: Duration,
}

/// A second handle on the connection `fd` (pingora's, which it holds now), whose answer may
/// take `read_timeout`; `None` when the system refuses one (logged once).
pub(super) fn keep(fd: RawFd, read_timeout: Option<Duration>) -> Option<Line> {
    let socket = duplicate(fd)?;
    let read_timeout = read_timeout.unwrap_or(DEFAULT_READ_TIMEOUT);
    Some(Line {
        socket,
        read_timeout,
    })
}

/// What a request owes when it ends: its slots (`permit`, the policies' in `aftercare`) and the
/// settlements go back now, or, when it ended by `e` (not the backend's failure) while its
/// `line` to the backend was still open (the answer had not ended), once the backend is done.
pub(super) async fn settle(
    e: Option<&Error>,
    line: Option<Line>,
    permit: Option<Permit>,
    mut aftercare: Aftercare,
    written: Option<u16>,
) {
    let owes = permit.is_some() || !aftercare.is_empty();
    let left_early = e.is_some_and(|e| e.esource() != &ErrorSource::Upstream);
    match line.filter(|_| owes && left_early) {
        Some(line) => {
            tokio::spawn(async move {
                line.drain().await;
                drop(permit);
                aftercare.finish(written).await;
            });
        }
        None => {
            drop(permit);
            if !aftercare.is_empty() {
                aftercare.finish(written).await;
            }
        }
    }
}

impl Line {
    /// Half-closes the connection and reads until the backend closes it, or `read_timeout`.
    async fn drain(self) {
        let std = std::net::TcpStream::from(self.socket);
        let _ = std.shutdown(std::net::Shutdown::Write);
        let opened = std
            .set_nonblocking(true)
            .and_then(|()| tokio::net::TcpStream::from_std(std));
        let Ok(mut stream) = opened else {
            return;
        };
        let mut discard = vec![0u8; 16 * 1024];
        let reading = async {
            // Ends at the backend's close (0 bytes) or a reset.
            while matches!(stream.read(&mut discard).await, Ok(n) if n > 0) {}
        };
        if tokio::time::timeout(self.read_timeout, reading)
            .await
            .is_err()
        {
            log::debug!(
                "a backend's answer to a client that left did not end within {:?}",
                self.read_timeout
            );
        }
    }
}

/// A duplicate of this process's descriptor `fd`.
#[cfg(target_os = "linux")]
fn duplicate(fd: RawFd) -> Option<OwnedFd> {
    use rustix::process::{getpid, pidfd_getfd, pidfd_open, PidfdFlags, PidfdGetfdFlags};
    use std::sync::OnceLock;
    static OWN: OnceLock<Option<OwnedFd>> = OnceLock::new();
    let own = OWN.get_or_init(|| match pidfd_open(getpid(), PidfdFlags::empty()) {
        Ok(own) => Some(own),
        Err(e) => {
            refused(&e);
            None
        }
    });
    match pidfd_getfd(own.as_ref()?, fd, PidfdGetfdFlags::empty()) {
        Ok(copy) => Some(copy),
        Err(e) => {
            refused(&e);
            None
        }
    }
}

/// No duplicate outside Linux: slots go back when the client leaves.
#[cfg(not(target_os = "linux"))]
fn duplicate(_fd: RawFd) -> Option<OwnedFd> {
    None
}

/// Logs, once, that backends' answers cannot be waited for after their clients leave.
#[cfg(target_os = "linux")]
fn refused(e: &rustix::io::Errno) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        log::warn!(
            "the system refuses a second handle on a backend connection ({e}): a request's \
             slot goes back when its client leaves, even while the backend still works on it"
        );
    });
}
