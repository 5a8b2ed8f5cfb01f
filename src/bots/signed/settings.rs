//! What `[bots.signed]` sets: the agents whose key directories may be fetched, the extra CA
//! trusted for them, and keys written in the config.

use std::path::PathBuf;
use std::sync::Arc;
use web_bot_auth::keyring::Thumbprintable;

/// A public key the config gives an agent (`[[bots.signed.key]]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfiguredKey {
    /// The agent's authority, lower case (`example.com`, `127.0.0.1:8443`).
    pub agent: Arc<str>,
    /// The key, an Ed25519 JWK (`kty = "OKP"`, `crv = "Ed25519"`); its key id is its JWK
    /// thumbprint (RFC 7638).
    pub jwk: Thumbprintable,
}

/// The checked `[bots.signed]` table; nothing is verified when it is empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SignedSettings {
    /// The authorities (`host` or `host:port`, lower case) whose
    /// `/.well-known/http-message-signatures-directory` may be fetched over HTTPS.
    pub agents: Vec<Arc<str>>,
    /// A PEM file of CA certificates trusted for the directories, besides the public roots.
    pub ca_file: Option<PathBuf>,
    /// Keys written in the config.
    pub keys: Vec<ConfiguredKey>,
}

impl SignedSettings {
    /// Whether anything can be verified: an agent to fetch keys from, or a key.
    pub fn is_empty(&self) -> bool {
        self.agents.is_empty() && self.keys.is_empty()
    }

    /// Whether `authority`'s directory may be fetched.
    pub fn fetches(&self, authority: &str) -> bool {
        self.agents.iter().any(|a| **a == *authority)
    }
}
