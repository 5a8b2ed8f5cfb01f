//! An HTTP/2 connection's stream as the listener hands it to pingora, looking at the bytes the
//! client sends as they pass through `poll_read` (nothing is copied aside but what the
//! fingerprint keeps, see `frames`) until its first header block has ended: then the
//! connection's first request is whole, which ends its head deadline (its [`HeadWatch`]), and
//! nothing more is looked at. Its fingerprint, when asked for, is registered for the
//! connection's requests (`registry`) as soon as it is known, or why it was declined. A
//! [`Tapped`] stream: every write and every other pingora stream trait passes through.

use super::super::head_watch::HeadWatch;
use super::frames::{FrameReader, Progress, Reading};
use super::registry::{register, Registered};
use crate::tap::{Tap, Tapped};
use async_trait::async_trait;
use pingora::protocols::{Peek, SocketDigest, Stream};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};

/// A downstream HTTP/2 stream whose first frames are read until its first request is whole.
pub type FirstFramesStream = Tapped<Stream, FirstFrames>;

/// What reads a stream's first frames.
#[derive(Debug)]
pub struct FirstFrames {
    /// The connection's head deadline, met when its first header block ends.
    watch: Arc<HeadWatch>,
    /// The connection's socket digest, which names it in the registry (when fingerprinted).
    socket: Option<Arc<SocketDigest>>,
    /// The reader, until the first request is whole (or the bytes are not HTTP/2).
    reader: Option<Box<FrameReader>>,
    /// The fingerprint's entry, once registered.
    registered: Option<Registered>,
}

/// `stream`, an HTTP/2 connection nothing was read from but the bytes it will read again,
/// whose first request ends `watch`'s deadline; read for its fingerprint too when
/// `fingerprint` and it has a socket digest (what its requests find it by).
pub fn first_frames(stream: Stream, watch: Arc<HeadWatch>, fingerprint: bool) -> Stream {
    let socket = stream.get_socket_digest().filter(|_| fingerprint);
    let reader = FrameReader::new(socket.is_some());
    let tap = FirstFrames {
        watch,
        socket,
        reader: Some(Box::new(reader)),
        registered: None,
    };
    Box::new(Tapped { inner: stream, tap })
}

impl FirstFrames {
    /// Looks at `read`, the bytes a read just gave.
    fn look_at(&mut self, read: &[u8]) {
        let Some(reader) = &mut self.reader else {
            return;
        };
        let progress = reader.read(read);
        if let Some(reading) = reader.take_reading() {
            self.register(reading);
        }
        match progress {
            Progress::Reading => {}
            Progress::FirstRequest => {
                self.watch.complete();
                self.reader = None;
            }
            Progress::NotHttp2 => {
                log::debug!("no HTTP/2 fingerprint: the first bytes are not HTTP/2");
                self.reader = None;
            }
        }
    }

    /// Registers `reading` for the connection's requests.
    fn register(&mut self, reading: Reading) {
        let Some(socket) = &self.socket else {
            return;
        };
        if let Err(declined) = &reading {
            log::debug!("no HTTP/2 fingerprint read: h2fp_declined={declined}");
        }
        self.registered = Some(register(socket.clone(), reading));
    }
}

impl Tap<Stream> for FirstFrames {
    fn poll_read(
        &mut self,
        inner: &mut Stream,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.reader.is_none() {
            return Pin::new(inner).poll_read(cx, buf);
        }
        let before = buf.filled().len();
        ready!(Pin::new(inner).poll_read(cx, buf))?;
        self.look_at(&buf.filled()[before..]);
        Poll::Ready(Ok(()))
    }
}

super::super::passthrough::pass_stream_traits!(FirstFramesStream);

#[async_trait]
impl Peek for FirstFramesStream {
    async fn try_peek(&mut self, buf: &mut [u8]) -> io::Result<bool> {
        self.inner.try_peek(buf).await
    }
}
