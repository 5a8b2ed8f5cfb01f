//! A downstream HTTP/1 connection as the listener hands it to pingora: every pingora stream
//! trait passes through, and reads of a request head are counted. A head that grows past
//! `max_header_bytes` is not read any further: the connection answers 431 and fails the read,
//! so no more than the limit is ever buffered for one head (pingora alone would take 1 MiB).
//! Bytes the listener read ahead (to tell HTTP/2 from HTTP/1, see `preface`) are read again
//! first, and are what a peek sees. The first bytes of each head are kept, so a head the
//! server answers before it is whole (pingora's parser refusing it, or the 431) is noted in the
//! watch with them ([`RefusedHead`](super::RefusedHead)), for the access log.

use super::head_watch::{HeadWatch, REFUSED_HEAD_BYTES};
use crate::gate::reply::problem_body;
use async_trait::async_trait;
use bytes::{Buf, BytesMut};
use pingora::protocols::http::ServerSession;
use pingora::protocols::l4::socket::SocketAddr;
use pingora::protocols::{Peek, Stream};
use std::io;
use std::pin::Pin;
use std::sync::{Arc, LazyLock};
use std::task::{ready, Context, Poll};
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The whole 431 response, sent as the connection closes.
static TOO_LARGE: LazyLock<Vec<u8>> = LazyLock::new(|| {
    let body = problem_body(
        431,
        "The request head is larger than this server accepts.",
        serde_json::json!({}),
    );
    let mut response = format!(
        "HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: {}\r\n\
         content-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n",
        crate::gate::reply::PROBLEM_JSON,
        body.len()
    )
    .into_bytes();
    response.extend_from_slice(&body);
    response
});

/// A downstream stream whose request heads are watched.
#[derive(Debug)]
pub struct WatchedStream {
    inner: Stream,
    watch: Arc<HeadWatch>,
    max_header_bytes: usize,
    /// Bytes of the 431 answer written, once the head outgrew the limit.
    refusing: Option<usize>,
    /// Bytes read ahead by the listener, read again before the stream's own.
    prefix: BytesMut,
    /// The first bytes of the head under way (at most `REFUSED_HEAD_BYTES`).
    head: Vec<u8>,
    /// Whether a head may be under way: set by a read of one, cleared by the next write,
    /// which then asks the watch whether the head was whole.
    in_head: bool,
}

impl WatchedStream {
    /// `inner`, accepted now, watched by `watch`, refusing heads over `max_header_bytes`.
    pub fn new(inner: Stream, watch: Arc<HeadWatch>, max_header_bytes: usize) -> Self {
        Self {
            inner,
            watch,
            max_header_bytes,
            refusing: None,
            prefix: BytesMut::new(),
            head: Vec::new(),
            in_head: false,
        }
    }

    /// The stream with `prefix`, bytes already read from it, to be read again first.
    pub fn with_prefix(mut self, prefix: BytesMut) -> Self {
        self.prefix = prefix;
        self
    }

    /// Reads what is left of the prefix into `buf`, at most `limit` bytes: how many.
    fn read_prefix(&mut self, buf: &mut ReadBuf<'_>, limit: usize) -> usize {
        let n = self.prefix.len().min(buf.remaining()).min(limit);
        buf.put_slice(&self.prefix[..n]);
        self.prefix.advance(n);
        n
    }

    /// Notes `read`, bytes of a head of which `before` bytes came earlier: the first ones are
    /// kept.
    fn note_head(&mut self, before: usize, read: &[u8]) {
        self.in_head = true;
        if before == 0 {
            self.head.clear();
        }
        let room = REFUSED_HEAD_BYTES.saturating_sub(self.head.len());
        self.head.extend_from_slice(&read[..read.len().min(room)]);
    }

    /// Writes the 431 answer, then fails the read that asked for more of the head.
    fn poll_refuse(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.refusing.is_none() {
            self.watch.answering(431, &self.head);
        }
        let written = self.refusing.get_or_insert(0);
        while *written < TOO_LARGE.len() {
            match ready!(Pin::new(&mut self.inner).poll_write(cx, &TOO_LARGE[*written..])) {
                Ok(0) | Err(_) => break,
                Ok(n) => *written += n,
            }
        }
        let _ = ready!(Pin::new(&mut self.inner).poll_flush(cx));
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "request head larger than server.max_header_bytes (answered 431)",
        )))
    }
}

/// The head watch of `session`'s connection, if the listener watches it.
pub fn head_watch(session: &ServerSession) -> Option<&Arc<HeadWatch>> {
    let stream: &Stream = session.stream()?;
    let watched = (**stream).as_any().downcast_ref::<WatchedStream>()?;
    Some(&watched.watch)
}

impl AsyncRead for WatchedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.refusing.is_some() {
            return this.poll_refuse(cx);
        }
        let Some(allowance) = this.watch.allowance(this.max_header_bytes) else {
            if !this.prefix.is_empty() {
                this.read_prefix(buf, usize::MAX);
                return Poll::Ready(Ok(()));
            }
            return Pin::new(&mut this.inner).poll_read(cx, buf);
        };
        if allowance == 0 {
            return this.poll_refuse(cx);
        }
        let before = this.max_header_bytes - allowance;
        let filled = buf.filled().len();
        if !this.prefix.is_empty() {
            let n = this.read_prefix(buf, allowance);
            this.watch.read(n, Instant::now);
            this.note_head(before, &buf.filled()[filled..]);
            return Poll::Ready(Ok(()));
        }
        if allowance >= buf.remaining() {
            // The whole space offered fits the allowance: read straight into it (limiting the
            // read would mean zero-filling the space first, on every request).
            ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
            this.watch.read(buf.filled().len() - filled, Instant::now);
            this.note_head(before, &buf.filled()[filled..]);
            return Poll::Ready(Ok(()));
        }
        // Read no more than the head may still hold.
        let room = buf.initialize_unfilled_to(allowance.min(buf.remaining()));
        let mut limited = ReadBuf::new(room);
        ready!(Pin::new(&mut this.inner).poll_read(cx, &mut limited))?;
        let n = limited.filled().len();
        buf.advance(n);
        this.watch.read(n, Instant::now);
        this.note_head(before, &buf.filled()[filled..]);
        Poll::Ready(Ok(()))
    }
}

/// The status of the response whose first bytes are `data` (`HTTP/1.1 400 …`); 400 if none
/// can be read there.
fn status_of(data: &[u8]) -> u16 {
    let digits = data.get(9..12).and_then(|d| std::str::from_utf8(d).ok());
    digits.and_then(|d| d.parse().ok()).unwrap_or(400)
}

impl AsyncWrite for WatchedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.in_head {
            // The first write after a head was read: an answer to a head not whole is a
            // refusal of it.
            this.in_head = false;
            this.watch.answering(status_of(data), &this.head);
        }
        Pin::new(&mut this.inner).poll_write(cx, data)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.in_head {
            this.in_head = false;
            let first = bufs
                .iter()
                .find(|b| !b.is_empty())
                .map_or(&[][..], |b| &b[..]);
            this.watch.answering(status_of(first), &this.head);
        }
        Pin::new(&mut this.inner).poll_write_vectored(cx, bufs)
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

super::passthrough::pass_stream_traits!(WatchedStream);

#[async_trait]
impl Peek for WatchedStream {
    async fn try_peek(&mut self, buf: &mut [u8]) -> io::Result<bool> {
        if self.prefix.is_empty() {
            return self.inner.try_peek(buf).await;
        }
        // What the listener read ahead is what there is to see: a prefix shorter than `buf`
        // already differs from what the peek looks for.
        let n = self.prefix.len().min(buf.len());
        buf[..n].copy_from_slice(&self.prefix[..n]);
        Ok(true)
    }
}

/// The client address of a stream: its TCP peer.
pub fn peer_ip(stream: &Stream) -> Option<std::net::IpAddr> {
    let digest = stream.get_socket_digest()?;
    let peer: &SocketAddr = digest.peer_addr()?;
    peer.as_inet().map(|a| a.ip())
}
