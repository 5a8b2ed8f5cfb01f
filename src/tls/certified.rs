//! A certificate chain and its private key, ready to serve: parsed from PEM (a file, an ACME
//! order), with the leaf's expiry and names read once.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;
use std::sync::Arc;

/// Why a chain and key cannot be served.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CertError {
    /// A file could not be read.
    #[error("cannot read {path}: {why}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        why: String,
    },
    /// The chain holds no certificate.
    #[error("no PEM certificate in the chain")]
    NoCertificate,
    /// No usable private key.
    #[error("no usable private key (PKCS#8, PKCS#1 or SEC1 PEM; RSA, ECDSA or Ed25519)")]
    NoKey,
    /// The leaf certificate does not parse.
    #[error("the certificate does not parse: {0}")]
    Unparsable(String),
    /// The key is not the leaf certificate's.
    #[error("the private key does not match the certificate")]
    KeyMismatch,
}

/// A chain and key to serve.
#[derive(Debug, Clone)]
pub struct Certified {
    /// What rustls serves.
    pub key: Arc<CertifiedKey>,
    /// When the leaf became valid, Unix seconds.
    pub not_before: i64,
    /// When the leaf expires, Unix seconds.
    pub not_after: i64,
    /// The leaf's DNS names (subjectAltName), lowercased.
    pub names: Vec<String>,
}

impl Certified {
    /// The chain `chain_pem` (leaf first) with its key `key_pem`.
    pub fn from_pem(chain_pem: &[u8], key_pem: &[u8]) -> Result<Self, CertError> {
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(chain_pem)
            .filter_map(Result::ok)
            .collect();
        let leaf = chain.first().ok_or(CertError::NoCertificate)?;
        let (not_before, not_after, names) = leaf_facts(leaf)?;
        let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|_| CertError::NoKey)?;
        let signer =
            rustls::crypto::ring::sign::any_supported_type(&key).map_err(|_| CertError::NoKey)?;
        let key = CertifiedKey::new(chain, signer);
        if key.keys_match().is_err() {
            return Err(CertError::KeyMismatch);
        }
        Ok(Self {
            key: Arc::new(key),
            not_before,
            not_after,
            names,
        })
    }

    /// The chain in the file `cert_file` with the key in `key_file`.
    pub fn from_files(cert_file: &str, key_file: &str) -> Result<Self, CertError> {
        let read = |path: &str| {
            std::fs::read(path).map_err(|e| CertError::Read {
                path: path.to_owned(),
                why: e.to_string(),
            })
        };
        Self::from_pem(&read(cert_file)?, &read(key_file)?)
    }

    /// How long the leaf is valid for, in seconds.
    pub fn lifetime(&self) -> i64 {
        self.not_after - self.not_before
    }

    /// The leaf certificate, DER.
    pub fn leaf(&self) -> &[u8] {
        self.key.cert.first().map(|c| c.as_ref()).unwrap_or(&[])
    }
}

/// The leaf's validity (Unix seconds) and DNS names.
fn leaf_facts(leaf: &CertificateDer<'_>) -> Result<(i64, i64, Vec<String>), CertError> {
    let (_, cert) = x509_parser::parse_x509_certificate(leaf)
        .map_err(|e| CertError::Unparsable(e.to_string()))?;
    let not_before = cert.validity().not_before.timestamp();
    let not_after = cert.validity().not_after.timestamp();
    let names = match cert.subject_alternative_name() {
        Ok(Some(san)) => san
            .value
            .general_names
            .iter()
            .filter_map(|name| match name {
                x509_parser::extensions::GeneralName::DNSName(dns) => {
                    Some(dns.to_ascii_lowercase())
                }
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    Ok((not_before, not_after, names))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn made(names: &[&str]) -> (String, String) {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let cert = rcgen::generate_simple_self_signed(names).unwrap();
        (cert.cert.pem(), cert.signing_key.serialize_pem())
    }

    #[test]
    fn reads_a_chain_and_its_key() {
        let (chain, key) = made(&["Shop.Example", "api.example"]);
        let certified = Certified::from_pem(chain.as_bytes(), key.as_bytes()).unwrap();
        assert_eq!(certified.names, ["shop.example", "api.example"]);
        assert!(certified.not_after > 1_700_000_000);
        assert!(!certified.leaf().is_empty());
    }

    #[test]
    fn refuses_what_cannot_be_served() {
        let (chain, key) = made(&["a.example"]);
        let (_, other_key) = made(&["b.example"]);
        let refuse = |c: &str, k: &str| Certified::from_pem(c.as_bytes(), k.as_bytes()).err();
        assert_eq!(refuse("", &key), Some(CertError::NoCertificate));
        assert_eq!(refuse(&chain, "junk"), Some(CertError::NoKey));
        assert_eq!(refuse(&chain, &other_key), Some(CertError::KeyMismatch));
    }
}
