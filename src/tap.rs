//! A stream wrapping another to watch it: every read and write passes through to the inner
//! stream, but for what its [`Tap`] takes over (the reads, to look at what arrives or to hold
//! a deadline; a look at each write before it goes). The downstream connections' head watch
//! and HTTP/2 fingerprint, and the rate limit service's admitted connections, are taps.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// What a [`Tapped`] stream does besides passing reads and writes through to `S`.
pub trait Tap<S: AsyncRead + AsyncWrite + Unpin>: Unpin {
    /// Reads from `inner` into `buf`: straight through unless the tap says otherwise.
    fn poll_read(
        &mut self,
        inner: &mut S,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(inner).poll_read(cx, buf)
    }

    /// Looks at a write about to go to the inner stream, `first` its first bytes (of a
    /// vectored write, its first slice that is not empty); nothing unless the tap says
    /// otherwise.
    fn writing(&mut self, first: &[u8]) {
        let _ = first;
    }
}

/// `inner`, watched by `tap`.
#[derive(Debug)]
pub struct Tapped<S, T> {
    /// The stream read from and written to.
    pub inner: S,
    /// What watches it.
    pub tap: T,
}

impl<S, T> AsyncRead for Tapped<S, T>
where
    S: AsyncRead + AsyncWrite + Unpin,
    T: Tap<S>,
{
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        this.tap.poll_read(&mut this.inner, cx, buf)
    }
}

impl<S, T> AsyncWrite for Tapped<S, T>
where
    S: AsyncRead + AsyncWrite + Unpin,
    T: Tap<S>,
{
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        this.tap.writing(data);
        Pin::new(&mut this.inner).poll_write(cx, data)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let first = bufs.iter().find(|b| !b.is_empty());
        this.tap.writing(first.map_or(&[][..], |b| &b[..]));
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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Counts what it reads, keeps the first bytes of each write.
    #[derive(Default)]
    struct Counting {
        read: usize,
        writes: Vec<Vec<u8>>,
    }

    impl<S: AsyncRead + AsyncWrite + Unpin> Tap<S> for Counting {
        fn poll_read(
            &mut self,
            inner: &mut S,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            let before = buf.filled().len();
            let read = Pin::new(inner).poll_read(cx, buf);
            self.read += buf.filled().len() - before;
            read
        }

        fn writing(&mut self, first: &[u8]) {
            self.writes.push(first.to_vec());
        }
    }

    /// Passes everything through.
    struct Plain;

    impl<S: AsyncRead + AsyncWrite + Unpin> Tap<S> for Plain {}

    #[tokio::test]
    async fn reads_and_writes_pass_through_the_tap() {
        let (near, mut far) = tokio::io::duplex(64);
        let mut tapped = Tapped {
            inner: near,
            tap: Counting::default(),
        };
        far.write_all(b"hello").await.unwrap();
        let mut got = [0; 5];
        tapped.read_exact(&mut got).await.unwrap();
        assert_eq!((&got, tapped.tap.read), (b"hello", 5));
        tapped.write_all(b"answer").await.unwrap();
        let slices = [io::IoSlice::new(b""), io::IoSlice::new(b"more")];
        let sent = tapped.write_vectored(&slices).await.unwrap();
        assert_eq!(sent, 4);
        tapped.flush().await.unwrap();
        assert_eq!(tapped.tap.writes, [b"answer".to_vec(), b"more".to_vec()]);
        let mut back = [0; 10];
        far.read_exact(&mut back).await.unwrap();
        assert_eq!(&back, b"answermore");
    }

    #[tokio::test]
    async fn a_plain_tap_changes_nothing() {
        let (near, mut far) = tokio::io::duplex(64);
        let mut tapped = Tapped {
            inner: near,
            tap: Plain,
        };
        tapped.write_all(b"ping").await.unwrap();
        tapped.shutdown().await.unwrap();
        let mut back = Vec::new();
        far.read_to_end(&mut back).await.unwrap();
        assert_eq!(back, b"ping");
    }
}
