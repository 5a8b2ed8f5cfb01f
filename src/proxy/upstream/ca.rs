//! A pool's own CA bundle: read when the pool is built (never per request) and handed to each
//! of its peers, so that pools can trust different CAs.

use pingora::protocols::tls::CaType;
use pingora::tls::RootCertStore;
use pingora::utils::tls::{parse_x509, WrappedX509};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use std::sync::Arc;

/// The DER certificates of the PEM bundle at `path`, each checked to be a usable root.
pub(super) fn read_bundle(path: &str) -> Result<Vec<Vec<u8>>, String> {
    let pem = std::fs::read(path).map_err(|e| e.to_string())?;
    let mut roots = RootCertStore::empty();
    let mut bundle = Vec::new();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| format!("not a PEM certificate bundle: {e}"))?;
        roots
            .add(cert.clone())
            .map_err(|e| format!("a certificate cannot be used as a root: {e}"))?;
        bundle.push(cert.to_vec());
    }
    if bundle.is_empty() {
        return Err("no certificate in the file".to_owned());
    }
    Ok(bundle)
}

/// The bundle as pingora's per-peer CA list.
pub(super) fn ca_list(bundle: &[Vec<u8>]) -> Arc<CaType> {
    // Every certificate was parsed as X.509 by `read_bundle` (webpki), so x509-parser, which
    // `parse_x509` calls, reads it too.
    bundle
        .iter()
        .map(|der| WrappedX509::new(der.clone(), parse_x509))
        .collect::<Vec<_>>()
        .into()
}
