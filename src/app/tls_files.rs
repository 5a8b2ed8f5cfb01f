//! `server.tls_cert_file` and `server.tls_key_file` read as the TLS listener will read them: a
//! chain of at least one PEM certificate, and a PEM private key (checked at start and by
//! `--test`; pingora itself reads them only once the listener is built).

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// `Ok` when `cert_file` holds PEM certificates and `key_file` a PEM private key; else why not.
pub(super) fn check(cert_file: &str, key_file: &str) -> Result<(), String> {
    let pem = std::fs::read(cert_file).map_err(|e| format!("{cert_file}: {e}"))?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{cert_file}: not a PEM certificate chain: {e}"))?;
    if certs.is_empty() {
        return Err(format!("{cert_file}: no PEM certificate in the file"));
    }
    PrivateKeyDer::from_pem_file(key_file)
        .map(drop)
        .map_err(|e| format!("{key_file}: not a PEM private key: {e}"))
}
