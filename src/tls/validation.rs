//! ACME TLS-ALPN-01 validations (RFC 8737) answered on the TLS listener: a connection that
//! offers `acme-tls/1` alone gets the validation certificate of the name it asks for (from
//! [`Validations`], which the ACME client fills) in a handshake of its own, and is closed
//! once it is done: it never reaches HTTP.

use super::offer::{Offer, ACME_TLS_ALPN};
use async_trait::async_trait;
use pingora::protocols::l4::stream::Stream as L4Stream;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use std::sync::Arc;
use tokio::io::AsyncWriteExt;

/// Where the validation certificates come from.
#[async_trait]
pub trait Validations: Send + Sync {
    /// The TLS-ALPN-01 certificate of a validation of `name` under way, if one is.
    async fn certificate(&self, name: &str) -> Option<Arc<CertifiedKey>>;
}

/// Answers the validation `offer` on `l4` (its ClientHello put back); logs what happened.
pub(super) async fn answer(validations: &dyn Validations, offer: &Offer, l4: L4Stream) {
    let Some(name) = &offer.name else {
        log::warn!("TLS-ALPN-01: a validation without a name was refused");
        return;
    };
    let Some(certificate) = validations.certificate(name).await else {
        log::warn!("TLS-ALPN-01: no validation of `{name}` is under way; refused");
        return;
    };
    let acceptor = pingora::tls::TlsAcceptor::from(Arc::new(config(certificate)));
    match acceptor.accept(l4).await {
        Ok(mut tls) => {
            log::info!("TLS-ALPN-01: answered the validation of `{name}`");
            let _ = tls.shutdown().await;
        }
        Err(e) => log::warn!("TLS-ALPN-01: the validation handshake of `{name}` failed: {e}"),
    }
}

/// A server config serving `certificate` with `acme-tls/1`.
fn config(certificate: Arc<CertifiedKey>) -> rustls::ServerConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS12, &rustls::version::TLS13])
        .expect("ring offers TLS 1.2 and 1.3")
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(One(certificate)));
    config.alpn_protocols = vec![ACME_TLS_ALPN.to_vec()];
    config
}

/// One certificate for every handshake.
#[derive(Debug)]
struct One(Arc<CertifiedKey>);

impl ResolvesServerCert for One {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.0.clone())
    }
}
