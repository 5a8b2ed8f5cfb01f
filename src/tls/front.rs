//! The proxy's TLS listener, served as TCP so that the ClientHello can be read before the
//! handshake: [`TlsFront::accept`] reads the first records (the whole ClientHello, bounded by
//! [`MAX_HELLO_BYTES`] and the head deadline), works out their JA4, puts the bytes back
//! (pingora's `rewind`) and runs pingora's rustls handshake on them. A connection whose first
//! bytes are not a ClientHello gets no JA4 and fails that handshake as it would without
//! Floodgate. The JA4 rides in the connection's TLS digest (`SslDigest::extension`, filled by
//! the handshake-complete callback from a task-local value), where every request on the
//! connection, HTTP/1 or HTTP/2, finds it: [`connection_ja4`]. The certificate is chosen by
//! name from [`ServedCertificates`]; a connection offering `acme-tls/1` alone is an ACME
//! validation, answered by [`validation`](super::validation) and closed.

use super::offer::offer;
use super::validation::{self, Validations};
use super::{ja4, scan, Scan, ServedCertificates, MAX_HELLO_BYTES};
use crate::identity::Ja4;
use async_trait::async_trait;
use pingora::listeners::tls::{Acceptor, TlsSettings};
use pingora::listeners::TlsAccept;
use pingora::protocols::l4::stream::Stream as L4Stream;
use pingora::protocols::tls::TlsRef;
use pingora::protocols::{Digest, Stream};
use std::any::Any;
use std::io;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncReadExt;

tokio::task_local! {
    /// The JA4 of the connection whose handshake is under way in this task.
    static CAPTURED: Option<Ja4>;
}

/// Why the TLS listener could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("TLS listener: {0}")]
pub struct TlsFrontError(String);

/// The TLS side of the proxy's listener.
pub struct TlsFront {
    acceptor: Acceptor,
    /// Whether the ClientHello is read for its JA4.
    ja4: bool,
    /// Where ACME TLS-ALPN-01 validations are answered from, when they are.
    validations: Option<Arc<dyn Validations>>,
}

impl TlsFront {
    /// Serving the certificates of `served`, offering HTTP/2 by ALPN when `h2`, reading each
    /// ClientHello for its JA4 when `ja4`, answering ACME TLS-ALPN-01 validations from
    /// `validations` when given.
    pub fn new(
        served: Arc<ServedCertificates>,
        h2: bool,
        ja4: bool,
        validations: Option<Arc<dyn Validations>>,
    ) -> Result<Self, TlsFrontError> {
        let error = |e: Box<pingora::Error>| TlsFrontError(e.to_string());
        let mut settings = TlsSettings::with_callbacks(Box::new(KeepJa4)).map_err(error)?;
        settings.set_cert_resolver(served);
        if h2 {
            // ALPN: h2 and http/1.1.
            settings.enable_h2();
        }
        Ok(Self {
            acceptor: settings.build(),
            ja4,
            validations,
        })
    }

    /// Whether the ClientHello is read before the handshake.
    fn reads_hello(&self) -> bool {
        self.ja4 || self.validations.is_some()
    }

    /// `stream`, a TCP connection nothing was read from, once its TLS handshake is done
    /// within `deadline`; `None` if it failed or took longer (the connection is closed).
    pub async fn accept(&self, stream: Stream, deadline: Duration) -> Option<Stream> {
        let Ok(mut l4) = stream.into_any().downcast::<L4Stream>() else {
            log::error!("the TLS listener was handed a stream that is not plain TCP");
            return None;
        };
        let handshake = async {
            let hello = match self.reads_hello() {
                true => read_hello(&mut l4).await.ok()?,
                false => None,
            };
            let offered = hello.as_deref().and_then(offer);
            if let (Some(validations), Some(offered)) = (&self.validations, &offered) {
                if offered.is_acme_validation() {
                    validation::answer(validations.as_ref(), offered, *l4).await;
                    return None;
                }
            }
            let ja4 = hello.as_deref().filter(|_| self.ja4).and_then(ja4);
            let done = CAPTURED.scope(ja4, self.acceptor.tls_handshake(*l4)).await;
            done.map_err(|e| log::debug!("TLS handshake failed: {e}"))
                .ok()
        };
        match tokio::time::timeout(deadline, handshake).await {
            Ok(tls) => Some(Box::new(tls?)),
            Err(_) => {
                log::debug!("closing a connection: no TLS handshake within {deadline:?}");
                None
            }
        }
    }
}

/// Reads the ClientHello off `l4` and puts the bytes back: the handshake message, if the
/// first bytes are one that can be read. An error if the connection closed first.
async fn read_hello(l4: &mut L4Stream) -> io::Result<Option<Vec<u8>>> {
    let mut read = Vec::with_capacity(2048);
    let hello = loop {
        match scan(&read) {
            Scan::More => {}
            Scan::Hello(hello) => break Some(hello),
            Scan::Unusable => break None,
        }
        let mut limited = (&mut *l4).take((MAX_HELLO_BYTES - read.len()) as u64);
        if limited.read_buf(&mut read).await? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
    };
    l4.rewind(&read);
    Ok(hello)
}

/// Puts the JA4 captured for the connection into its TLS digest once the handshake is done.
struct KeepJa4;

#[async_trait]
impl TlsAccept for KeepJa4 {
    async fn handshake_complete_callback(
        &self,
        _tls: &TlsRef,
    ) -> Option<Arc<dyn Any + Send + Sync>> {
        let ja4 = CAPTURED.try_with(|ja4| *ja4).ok().flatten()?;
        Some(Arc::new(ja4))
    }
}

/// The JA4 of the TLS connection `digest` describes, when Floodgate's listener read it.
pub fn connection_ja4(digest: Option<&Digest>) -> Option<Ja4> {
    let tls = digest?.ssl_digest.as_ref()?;
    tls.extension.get::<Ja4>().copied()
}
