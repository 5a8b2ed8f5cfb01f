//! An HTTP/2 connection's stream as the listener hands it to pingora, looking at the bytes the
//! client sends as they pass through `poll_read` (nothing is copied aside but what the
//! fingerprint keeps, see `frames`) until its first header block has ended; then its
//! fingerprint is registered for the connection's requests (`registry`) and nothing more is
//! looked at. Every pingora stream trait passes through.

use super::frames::{FrameReader, Progress};
use super::registry::{register, Registered};
use async_trait::async_trait;
use pingora::protocols::raw_connect::ProxyDigest;
use pingora::protocols::tls::{SslDigest, TlsRef};
use pingora::protocols::{
    GetProxyDigest, GetSocketDigest, GetTimingDigest, Peek, Shutdown, SocketDigest, Ssl, Stream,
    TimingDigest, UniqueID, UniqueIDType, ALPN,
};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;
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

#[async_trait]
impl Shutdown for FingerprintedStream {
    async fn shutdown(&mut self) {
        self.inner.shutdown().await
    }
}

impl UniqueID for FingerprintedStream {
    fn id(&self) -> UniqueIDType {
        self.inner.id()
    }
}

impl Ssl for FingerprintedStream {
    fn get_ssl(&self) -> Option<&TlsRef> {
        self.inner.get_ssl()
    }

    fn get_ssl_digest(&self) -> Option<Arc<SslDigest>> {
        self.inner.get_ssl_digest()
    }

    fn selected_alpn_proto(&self) -> Option<ALPN> {
        self.inner.selected_alpn_proto()
    }
}

impl GetTimingDigest for FingerprintedStream {
    fn get_timing_digest(&self) -> Vec<Option<TimingDigest>> {
        self.inner.get_timing_digest()
    }

    fn get_read_pending_time(&self) -> Duration {
        self.inner.get_read_pending_time()
    }

    fn get_write_pending_time(&self) -> Duration {
        self.inner.get_write_pending_time()
    }
}

impl GetProxyDigest for FingerprintedStream {
    fn get_proxy_digest(&self) -> Option<Arc<ProxyDigest>> {
        self.inner.get_proxy_digest()
    }

    fn set_proxy_digest(&mut self, digest: ProxyDigest) {
        self.inner.set_proxy_digest(digest)
    }
}

impl GetSocketDigest for FingerprintedStream {
    fn get_socket_digest(&self) -> Option<Arc<SocketDigest>> {
        self.inner.get_socket_digest()
    }

    fn set_socket_digest(&mut self, digest: SocketDigest) {
        self.inner.set_socket_digest(digest)
    }
}

#[async_trait]
impl Peek for FingerprintedStream {
    async fn try_peek(&mut self, buf: &mut [u8]) -> io::Result<bool> {
        self.inner.try_peek(buf).await
    }
}
