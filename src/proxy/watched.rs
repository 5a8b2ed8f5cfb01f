//! A downstream HTTP/1 connection as the listener hands it to pingora, a [`Tapped`] stream:
//! every pingora stream trait passes through, and reads of a request head are counted. A head that grows past
//! `max_header_bytes` is not read any further: the connection answers 431 and fails the read,
//! so no more than the limit is ever buffered for one head (pingora alone would take 1 MiB).
//! Bytes the listener read ahead (to tell HTTP/2 from HTTP/1, see `preface`) are read again
//! first, and are what a peek sees. The first bytes of each head are kept, so a head the
//! server answers before it is whole (pingora's parser refusing it, or the 431) is noted in the
//! watch with them ([`RefusedHead`](super::RefusedHead)), for the access log.

use super::head_watch::{HeadWatch, REFUSED_HEAD_BYTES};
use crate::gate::reply::problem_body;
use crate::tap::{Tap, Tapped};
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
pub type WatchedStream = Tapped<Stream, HeadTap>;

/// What watches a stream's request heads.
#[derive(Debug)]
pub struct HeadTap {
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
        let tap = HeadTap {
            watch,
            max_header_bytes,
            refusing: None,
            prefix: BytesMut::new(),
            head: Vec::new(),
            in_head: false,
        };
        Self { inner, tap }
    }

    /// The stream with `prefix`, bytes already read from it, to be read again first.
    pub fn with_prefix(mut self, prefix: BytesMut) -> Self {
        self.tap.prefix = prefix;
        self
    }
}

impl HeadTap {
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

    /// Writes the 431 answer to `inner`, then fails the read that asked for more of the head.
    fn poll_refuse(&mut self, inner: &mut Stream, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.refusing.is_none() {
            self.watch.answering(431, &self.head);
        }
        let written = self.refusing.get_or_insert(0);
        while *written < TOO_LARGE.len() {
            match ready!(Pin::new(&mut *inner).poll_write(cx, &TOO_LARGE[*written..])) {
                Ok(0) | Err(_) => break,
                Ok(n) => *written += n,
            }
        }
        let _ = ready!(Pin::new(inner).poll_flush(cx));
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
    Some(&watched.tap.watch)
}

impl Tap<Stream> for HeadTap {
    fn poll_read(
        &mut self,
        inner: &mut Stream,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.refusing.is_some() {
            return self.poll_refuse(inner, cx);
        }
        let Some(allowance) = self.watch.allowance(self.max_header_bytes) else {
            if !self.prefix.is_empty() {
                self.read_prefix(buf, usize::MAX);
                return Poll::Ready(Ok(()));
            }
            return Pin::new(inner).poll_read(cx, buf);
        };
        if allowance == 0 {
            return self.poll_refuse(inner, cx);
        }
        let before = self.max_header_bytes - allowance;
        let filled = buf.filled().len();
        if !self.prefix.is_empty() {
            let n = self.read_prefix(buf, allowance);
            self.watch.read(n, Instant::now);
            self.note_head(before, &buf.filled()[filled..]);
            return Poll::Ready(Ok(()));
        }
        if allowance >= buf.remaining() {
            // The whole space offered fits the allowance: read straight into it (limiting the
            // read would mean zero-filling the space first, on every request).
            ready!(Pin::new(inner).poll_read(cx, buf))?;
            self.watch.read(buf.filled().len() - filled, Instant::now);
            self.note_head(before, &buf.filled()[filled..]);
            return Poll::Ready(Ok(()));
        }
        // Read no more than the head may still hold.
        let room = buf.initialize_unfilled_to(allowance.min(buf.remaining()));
        let mut limited = ReadBuf::new(room);
        ready!(Pin::new(inner).poll_read(cx, &mut limited))?;
        let n = limited.filled().len();
        buf.advance(n);
        self.watch.read(n, Instant::now);
        self.note_head(before, &buf.filled()[filled..]);
        Poll::Ready(Ok(()))
    }

    /// The first write after a head was read: an answer to a head not whole is a refusal of
    /// it.
    fn writing(&mut self, first: &[u8]) {
        if self.in_head {
            self.in_head = false;
            self.watch.answering(status_of(first), &self.head);
        }
    }
}

/// The status of the response whose first bytes are `data` (`HTTP/1.1 400 …`); 400 if none
/// can be read there.
fn status_of(data: &[u8]) -> u16 {
    let digits = data.get(9..12).and_then(|d| std::str::from_utf8(d).ok());
    digits.and_then(|d| d.parse().ok()).unwrap_or(400)
}

super::passthrough::pass_stream_traits!(WatchedStream);

#[async_trait]
impl Peek for WatchedStream {
    async fn try_peek(&mut self, buf: &mut [u8]) -> io::Result<bool> {
        let prefix = &self.tap.prefix;
        if prefix.is_empty() {
            return self.inner.try_peek(buf).await;
        }
        // What the listener read ahead is what there is to see: a prefix shorter than `buf`
        // already differs from what the peek looks for.
        let n = prefix.len().min(buf.len());
        buf[..n].copy_from_slice(&prefix[..n]);
        Ok(true)
    }
}

/// The client address of a stream: its TCP peer.
pub fn peer_ip(stream: &Stream) -> Option<std::net::IpAddr> {
    let digest = stream.get_socket_digest()?;
    let peer: &SocketAddr = digest.peer_addr()?;
    peer.as_inet().map(|a| a.ip())
}
