//! An HTTP/2 connection's stream as the listener hands it to pingora, looking at the bytes the
//! client sends as they pass through `poll_read` (nothing is copied aside but what the
//! fingerprint keeps, see `frames`) until its first header block has ended; then its
//! fingerprint is registered for the connection's requests (`registry`) and nothing more is
//! looked at. Every pingora stream trait passes through.

use super::frames::{FrameReader, Progress};
use super::registry::{register, Registered};
use async_trait::async_trait;
use pingora::protocols::{Peek, SocketDigest, Stream};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A downstream HTTP/2 stream whose first frames are read for its fingerprint.
#[derive(Debug)]
pub struct FingerprintedStream {
    inner: Stream,
    /// The connection's socket digest, which names it in the registry.
    socket: Arc<SocketDigest>,
    /// The reader, until the fingerprint is known or given up on.
    reader: Option<Box<FrameReader>>,
    /// The fingerprint's entry, once registered.
    registered: Option<Registered>,
}

/// `stream`, an HTTP/2 connection nothing was read from but the bytes it will read again,
/// fingerprinted as its client's first frames pass; as it is if it has no socket digest
/// (nothing for its requests to find it by).
pub fn fingerprinted(stream: Stream) -> Stream {
    match stream.get_socket_digest() {
        Some(socket) => Box::new(FingerprintedStream {
            inner: stream,
            socket,
            reader: Some(Box::default()),
            registered: None,
        }),
        None => stream,
    }
}

impl FingerprintedStream {
    /// Looks at `read`, the bytes a read just gave.
    fn look_at(&mut self, read: &[u8]) {
        let Some(reader) = &mut self.reader else {
            return;
        };
        match reader.read(read) {
            Progress::Reading => {}
            Progress::Done(fingerprint) => {
                self.reader = None;
                self.registered = Some(register(self.socket.clone(), fingerprint));
            }
            Progress::GaveUp => {
                log::debug!("no HTTP/2 fingerprint: the first frames could not be read");
                self.reader = None;
            }
        }
    }
}

impl AsyncRead for FingerprintedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.reader.is_none() {
            return Pin::new(&mut this.inner).poll_read(cx, buf);
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        this.look_at(&buf.filled()[before..]);
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for FingerprintedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, data)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

super::super::passthrough::pass_stream_traits!(FingerprintedStream);

#[async_trait]
impl Peek for FingerprintedStream {
    async fn try_peek(&mut self, buf: &mut [u8]) -> io::Result<bool> {
        self.inner.try_peek(buf).await
    }
}
