//! The answers to the CA's validations under way: an HTTP-01 token's key authorization
//! (served at `/.well-known/acme-challenge/{token}` by the proxy) and a TLS-ALPN-01 domain's
//! certificate (served by the TLS listener). The instance that orders knows them first; in a
//! fleet they are in Redis too, so whichever instance the CA reaches answers.

use super::vault::Vault;
use crate::tls::Validations;
use async_trait::async_trait;
use parking_lot::Mutex;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::sign::CertifiedKey;
use std::collections::HashMap;
use std::sync::Arc;

/// The path HTTP-01 tokens are asked for under.
pub const HTTP01_PATH: &str = "/.well-known/acme-challenge/";

/// Where a validation is looked for: the kind of challenge and its name.
fn http01_name(token: &str) -> String {
    format!("http-01:{token}")
}

fn alpn_name(domain: &str) -> String {
    format!("tls-alpn-01:{domain}")
}

/// The validations under way.
pub struct Answers {
    /// Answers this instance published, by name.
    local: Mutex<HashMap<String, String>>,
    /// TLS-ALPN-01 certificates made, by domain, with the key authorization they carry.
    made: Mutex<HashMap<String, (String, Arc<CertifiedKey>)>>,
    vault: Arc<Vault>,
    /// This second's asks of the fleet.
    asks: Allowance,
}

/// How many times a second one instance asks the fleet for an answer it does not hold: the
/// CA's validators ask a few times per validation.
const FLEET_ASKS_PER_SECOND: u32 = 50;

/// A count of uses per second, up to a bound.
#[derive(Debug, Default)]
struct Allowance {
    /// The second counted, and the uses in it (second << 32 | uses).
    used: std::sync::atomic::AtomicU64,
}

impl Allowance {
    /// Takes one use in `second`; false once [`FLEET_ASKS_PER_SECOND`] were taken in it.
    fn take(&self, second: u64) -> bool {
        use std::sync::atomic::Ordering;
        let mut granted = false;
        let _ = self
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                let (at, uses) = (held >> 32, held & 0xffff_ffff);
                let uses = if at == second & 0xffff_ffff { uses } else { 0 };
                granted = uses < u64::from(FLEET_ASKS_PER_SECOND);
                Some(((second & 0xffff_ffff) << 32) | (uses + u64::from(granted)))
            });
        granted
    }
}

impl Answers {
    /// Answers kept in this process and, in a fleet, in `vault`.
    pub fn new(vault: Arc<Vault>) -> Self {
        Self {
            local: Mutex::default(),
            made: Mutex::default(),
            vault,
            asks: Allowance::default(),
        }
    }

    /// Publishes the HTTP-01 answer `key_authorization` to `token` (here; the caller puts it
    /// in the fleet's copy).
    pub(super) fn publish_http01(&self, token: &str, key_authorization: &str) -> String {
        let name = http01_name(token);
        self.local
            .lock()
            .insert(name.clone(), key_authorization.to_owned());
        name
    }

    /// Publishes the TLS-ALPN-01 answer `key_authorization` for `domain`.
    pub(super) fn publish_alpn(&self, domain: &str, key_authorization: &str) -> String {
        let name = alpn_name(domain);
        self.local
            .lock()
            .insert(name.clone(), key_authorization.to_owned());
        name
    }

    /// Withdraws the answer `name`.
    pub(super) fn withdraw(&self, name: &str) {
        self.local.lock().remove(name);
    }

    /// The key authorization `name` answers with: this instance's, else the fleet's (asked
    /// at most [`FLEET_ASKS_PER_SECOND`] times a second, so requests for made-up tokens, which
    /// come before any limit, cannot turn into a flood of Redis calls).
    async fn lookup(&self, name: &str) -> Option<String> {
        if let Some(answer) = self.local.lock().get(name).cloned() {
            return Some(answer);
        }
        let fleet = self.vault.fleet()?;
        let second = crate::clock::monotonic_s();
        match self.asks.take(second) {
            true => fleet.asked(name).await,
            false => None,
        }
    }

    /// The body to answer an HTTP-01 request for `token` with, if one is under way.
    pub async fn http01(&self, token: &str) -> Option<String> {
        let valid = !token.is_empty()
            && token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        match valid {
            true => self.lookup(&http01_name(token)).await,
            false => None,
        }
    }
}

#[async_trait]
impl Validations for Answers {
    async fn certificate(&self, name: &str) -> Option<Arc<CertifiedKey>> {
        let key_authorization = self.lookup(&alpn_name(name)).await?;
        if let Some((made_for, certificate)) = self.made.lock().get(name) {
            if *made_for == key_authorization {
                return Some(certificate.clone());
            }
        }
        let certificate = match validation_certificate(name, &key_authorization) {
            Ok(certificate) => Arc::new(certificate),
            Err(e) => {
                log::warn!("TLS-ALPN-01: cannot make the validation certificate of `{name}`: {e}");
                return None;
            }
        };
        let mut made = self.made.lock();
        made.retain(|domain, _| domain == name);
        made.insert(name.to_owned(), (key_authorization, certificate.clone()));
        Some(certificate)
    }
}

/// The self-signed certificate of RFC 8737: `domain` as its only name, the SHA-256 of
/// `key_authorization` in the critical acmeIdentifier extension.
fn validation_certificate(domain: &str, key_authorization: &str) -> Result<CertifiedKey, String> {
    let digest = ring::digest::digest(&ring::digest::SHA256, key_authorization.as_bytes());
    let mut params =
        rcgen::CertificateParams::new(vec![domain.to_owned()]).map_err(|e| e.to_string())?;
    params.custom_extensions = vec![rcgen::CustomExtension::new_acme_identifier(digest.as_ref())];
    let key = rcgen::KeyPair::generate().map_err(|e| e.to_string())?;
    let cert = params.self_signed(&key).map_err(|e| e.to_string())?;
    let der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let signer = rustls::crypto::ring::sign::any_supported_type(&der).map_err(|e| e.to_string())?;
    Ok(CertifiedKey::new(
        vec![CertificateDer::from(cert.der().to_vec())],
        signer,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acme::files::FileVault;

    fn answers() -> Answers {
        let dir = std::env::temp_dir().join(format!("fg-acme-answers-{}", std::process::id()));
        Answers::new(Arc::new(Vault::Files(FileVault::new(&dir).unwrap())))
    }

    #[test]
    fn the_fleet_is_asked_a_bounded_number_of_times_a_second() {
        let allowance = Allowance::default();
        let granted = (0..200).filter(|_| allowance.take(7)).count();
        assert_eq!(granted, FLEET_ASKS_PER_SECOND as usize);
        assert!(allowance.take(8), "a new second, a new allowance");
    }

    #[tokio::test]
    async fn answers_what_was_published_and_nothing_else() {
        let answers = answers();
        let name = answers.publish_http01("tok-EN_1", "tok-EN_1.thumb");
        assert_eq!(
            answers.http01("tok-EN_1").await.as_deref(),
            Some("tok-EN_1.thumb")
        );
        assert_eq!(answers.http01("other").await, None);
        assert_eq!(answers.http01("../etc").await, None);
        answers.withdraw(&name);
        assert_eq!(answers.http01("tok-EN_1").await, None);
    }

    #[tokio::test]
    async fn a_tls_alpn_validation_gets_a_certificate_for_its_domain() {
        let answers = answers();
        assert!(answers.certificate("shop.example").await.is_none());
        answers.publish_alpn("shop.example", "token.thumb");
        let first = answers.certificate("shop.example").await.unwrap();
        let again = answers.certificate("shop.example").await.unwrap();
        assert!(
            Arc::ptr_eq(&first, &again),
            "made once per key authorization"
        );
        let (_, cert) = x509_parser::parse_x509_certificate(first.cert[0].as_ref()).unwrap();
        let acme_id = x509_parser::oid_registry::Oid::from(&[1, 3, 6, 1, 5, 5, 7, 1, 31]).unwrap();
        let extension = cert.get_extension_unique(&acme_id).unwrap().unwrap();
        assert!(extension.critical);
        let digest = ring::digest::digest(&ring::digest::SHA256, b"token.thumb");
        assert!(extension.value.ends_with(digest.as_ref()));
    }
}
