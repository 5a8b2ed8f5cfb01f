//! Cleartext HTTP/2 with prior knowledge (h2c) beside HTTP/1 on the plain listener: the first
//! bytes of a connection say which it is. Pingora's own check waits for 24 bytes with no
//! deadline (a short HTTP/1.0 request would hang, a silent client would hold the connection
//! forever); this one decides at the first byte that differs from the HTTP/2 preface and
//! gives up at the head deadline.

use bytes::BytesMut;
use std::io;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};

/// The HTTP/2 connection preface (RFC 9113 §3.4).
pub(super) const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// What a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preface {
    /// It opened with the HTTP/2 preface.
    H2,
    /// Anything else: HTTP/1.
    Http1,
}

/// Reads from `stream` until its protocol is known, within `deadline`: the protocol and the
/// bytes read (to be read again by whoever serves the connection). An error when the
/// connection closes or stays silent before that.
pub async fn sniff<R: AsyncRead + Unpin>(
    stream: &mut R,
    deadline: Duration,
) -> io::Result<(Preface, BytesMut)> {
    let mut read = BytesMut::with_capacity(H2_PREFACE.len());
    let sniffing = async {
        loop {
            let seen = read.len();
            if seen == H2_PREFACE.len() {
                return Ok(Preface::H2);
            }
            let mut chunk = [0u8; 24];
            let n = stream.read(&mut chunk[..H2_PREFACE.len() - seen]).await?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "closed before the first request",
                ));
            }
            read.extend_from_slice(&chunk[..n]);
            if read[..] != H2_PREFACE[..read.len()] {
                return Ok(Preface::Http1);
            }
        }
    };
    match tokio::time::timeout(deadline, sniffing).await {
        Ok(Ok(preface)) => Ok((preface, read)),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "no request within the head deadline",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn sniffed(bytes: &'static [u8]) -> io::Result<(Preface, BytesMut)> {
        let mut stream = bytes;
        sniff(&mut stream, Duration::from_secs(1)).await
    }

    #[tokio::test]
    async fn the_first_differing_byte_decides() {
        let (preface, read) = sniffed(b"GET / HTTP/1.0\r\n\r\n").await.unwrap();
        assert_eq!(preface, Preface::Http1);
        assert_eq!(&read[..], b"GET / HTTP/1.0\r\n\r\n");
        let (preface, read) = sniffed(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\x12")
            .await
            .unwrap();
        assert_eq!(preface, Preface::H2);
        assert_eq!(&read[..], H2_PREFACE);
        let (preface, _) = sniffed(b"PRI * HTTP/1.1\r\n").await.unwrap();
        assert_eq!(preface, Preface::Http1);
        assert!(sniffed(b"PRI * HT").await.is_err(), "closed mid-preface");
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_connection_gives_up_at_the_deadline() {
        let (mut client, mut server) = tokio::io::duplex(64);
        let sniffing =
            tokio::spawn(async move { sniff(&mut server, Duration::from_secs(10)).await });
        tokio::io::AsyncWriteExt::write_all(&mut client, b"PRI")
            .await
            .unwrap();
        let e = sniffing.await.unwrap().unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
    }
}
