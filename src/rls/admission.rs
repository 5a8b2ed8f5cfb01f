//! The connections the rate limit service admits: at most `server.max_connections` open at
//! once (one past that is closed as soon as it is accepted), and each held to
//! `server.header_timeout` until its first request: a connection whose HTTP/2 preface, or
//! whose first request's headers, have not arrived by then fails its next read and is closed.
//! The request marks its connection ([`first_request`], an interceptor) through the connection
//! info tonic hands every request. An admitted connection is a [`Tapped`] stream: its writes
//! pass through.

use crate::tap::{Tap, Tapped};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Sleep;
use tonic::transport::server::{Connected, TlsConnectInfo};

/// What tonic hands each request about its connection: the mark its first request sets.
#[derive(Debug, Clone)]
pub(super) struct ConnInfo {
    started: Arc<AtomicBool>,
}

/// An admitted connection: counted until dropped, closed if no request starts on it in time.
pub(super) type Admitted = Tapped<TcpStream, Admittance>;

/// What an admitted connection holds: its place among the open ones, and until its first
/// request, its deadline.
#[derive(Debug)]
pub(super) struct Admittance {
    _permit: OwnedSemaphorePermit,
    /// Until the first request: when the connection is closed without one.
    deadline: Option<Pin<Box<Sleep>>>,
    started: Arc<AtomicBool>,
}

impl Tap<TcpStream> for Admittance {
    fn poll_read(
        &mut self,
        inner: &mut TcpStream,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Some(deadline) = &mut self.deadline {
            if self.started.load(Ordering::Acquire) {
                self.deadline = None;
            } else if deadline.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "no request within server.header_timeout of the accept",
                )));
            }
        }
        Pin::new(inner).poll_read(cx, buf)
    }
}

impl Connected for Admitted {
    type ConnectInfo = ConnInfo;

    fn connect_info(&self) -> ConnInfo {
        ConnInfo {
            started: self.tap.started.clone(),
        }
    }
}

/// Marks the connection of `request` as having started a request (its deadline is over).
/// An interceptor: it runs once the request's headers are in.
pub(super) fn first_request(
    request: tonic::Request<()>,
) -> Result<tonic::Request<()>, tonic::Status> {
    let extensions = request.extensions();
    let info = extensions.get::<ConnInfo>().or_else(|| {
        let tls = extensions.get::<TlsConnectInfo<ConnInfo>>()?;
        Some(tls.get_ref())
    });
    if let Some(info) = info {
        info.started.store(true, Ordering::Release);
    }
    Ok(request)
}

/// The connections `listener` accepts, at most `max` open at once, each to start a request
/// within `first_request_within`.
pub(super) fn incoming(
    listener: TcpListener,
    max: usize,
    first_request_within: Duration,
) -> impl futures::Stream<Item = io::Result<Admitted>> {
    let permits = Arc::new(Semaphore::new(max));
    futures::stream::unfold((listener, permits), move |(listener, permits)| async move {
        let admitted = accept(&listener, &permits, first_request_within).await;
        Some((Ok(admitted), (listener, permits)))
    })
}

/// The next connection admitted: those past the cap are closed at once, accept errors (the
/// open-file limit) waited out.
async fn accept(listener: &TcpListener, permits: &Arc<Semaphore>, within: Duration) -> Admitted {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                log::debug!("the rate limit service cannot accept: {e}");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            log::debug!(
                "refusing a connection to the rate limit service: server.max_connections open"
            );
            continue;
        };
        let _ = stream.set_nodelay(true);
        let tap = Admittance {
            _permit: permit,
            deadline: Some(Box::pin(tokio::time::sleep(within))),
            started: Arc::new(AtomicBool::new(false)),
        };
        return Tapped { inner: stream, tap };
    }
}
