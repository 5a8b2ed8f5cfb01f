//! `[tls.acme]` as the ACME client uses it.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// Let's Encrypt's production directory: the default.
pub const LETS_ENCRYPT: &str = "https://acme-v02.api.letsencrypt.org/directory";
/// Let's Encrypt's staging directory: try a setup here first (its certificates are not
/// trusted by browsers, and its rate limits are far higher).
pub const LETS_ENCRYPT_STAGING: &str = "https://acme-staging-v02.api.letsencrypt.org/directory";

/// How the CA is shown that Floodgate answers for a domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChallengeType {
    /// A token served over plain HTTP on port 80 (`server.listen`), at
    /// `/.well-known/acme-challenge/{token}`.
    Http01,
    /// A certificate served by TLS with ALPN `acme-tls/1` on port 443 (`server.tls_listen`).
    TlsAlpn01,
}

impl ChallengeType {
    /// Every type, in the order of their config words.
    pub const ALL: [Self; 2] = [Self::Http01, Self::TlsAlpn01];

    /// The config word.
    pub fn word(self) -> &'static str {
        match self {
            Self::Http01 => "http-01",
            Self::TlsAlpn01 => "tls-alpn-01",
        }
    }
}

/// External account binding: the CA's key id and its HMAC key (secret).
#[derive(Clone, PartialEq, Eq)]
pub struct Eab {
    /// `eab_kid`.
    pub kid: String,
    /// The HMAC key read from `eab_hmac_key_file` (base64url decoded).
    pub hmac_key: Vec<u8>,
}

impl fmt::Debug for Eab {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Eab")
            .field("kid", &self.kid)
            .field("hmac_key", &"<secret>")
            .finish()
    }
}

/// `[tls.acme]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcmeSettings {
    /// The ACME v2 directory URL.
    pub directory: String,
    /// The account's contact address.
    pub email: String,
    /// The names to hold certificates for (one certificate each), lowercased.
    pub domains: Vec<String>,
    /// How the CA validates them.
    pub challenge: ChallengeType,
    /// Extra roots the ACME server's certificate is trusted by (besides the public ones).
    pub ca_file: Option<PathBuf>,
    /// How long before expiry a certificate is renewed; `None`: a third of its lifetime.
    pub renew_before: Option<Duration>,
    /// External account binding, when the CA asks for it.
    pub eab: Option<Eab>,
    /// On the memory store: where the account and certificates are kept (files 0600).
    pub state_dir: Option<PathBuf>,
}
