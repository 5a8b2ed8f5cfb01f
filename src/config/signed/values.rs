//! `[bots.signed]`'s typed values: an agent's authority and a key's JWK, each checked while
//! the file is parsed, so toml locates its error where it stands. (`bots.signed.agents` is a
//! list, which toml locates only as a whole: its elements stay `Spanned` and are checked with
//! [`authority`].)

use crate::config::value::Key;
use http::uri::Authority;
use serde::{de::Error, Deserialize, Deserializer};
use std::marker::PhantomData;
use std::sync::Arc;
use web_bot_auth::keyring::Thumbprintable;

/// `text` as an agent's authority, in lower case (a host, or a host and port: `chatgpt.com`,
/// `127.0.0.1:8443`), else why not (naming `key`).
pub(crate) fn authority(text: &str, key: &str) -> Result<Arc<str>, String> {
    let value = text.trim().to_ascii_lowercase();
    match value.parse::<Authority>() {
        Ok(a) if !value.contains('@') && !a.host().is_empty() => Ok(value.into()),
        _ => Err(format!(
            "`{key}`: `{value}` is not an agent's authority (a host or host:port, like \
             \"chatgpt.com\")"
        )),
    }
}

/// An agent's authority written under key `K`, read in lower case; anything else is refused
/// as [`authority`] says.
#[derive(Debug)]
pub(crate) struct AgentAuthority<K> {
    value: Arc<str>,
    key: PhantomData<K>,
}

impl<K> AgentAuthority<K> {
    /// The authority, lower case.
    pub(crate) fn get(&self) -> Arc<str> {
        self.value.clone()
    }
}

impl<'de, K: Key> Deserialize<'de> for AgentAuthority<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let value = authority(&text, K::NAME).map_err(D::Error::custom)?;
        Ok(Self {
            value,
            key: PhantomData,
        })
    }
}

/// A public key as a JWK, as written (members other than these, like `kid` or `use`, are
/// passed over).
#[derive(Deserialize)]
struct JwkFile {
    kty: String,
    crv: String,
    x: String,
}

/// `bots.signed.key.jwk`: an Ed25519 public key as a JWK; anything else is refused with
/// "`bots.signed.key.jwk`: why (an Ed25519 public key: …)".
#[derive(Debug)]
pub(crate) struct Jwk(pub(crate) Thumbprintable);

impl<'de> Deserialize<'de> for Jwk {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let jwk = JwkFile::deserialize(deserializer)?;
        let bad = |why: &str| {
            D::Error::custom(format!(
                "`bots.signed.key.jwk`: {why} (an Ed25519 public key: kty = \"OKP\", crv = \
                 \"Ed25519\", x = its 32 bytes in base64url)"
            ))
        };
        if jwk.kty != "OKP" || jwk.crv != "Ed25519" {
            return Err(bad("not an Ed25519 key"));
        }
        let key = Thumbprintable::OKP {
            crv: jwk.crv,
            x: jwk.x,
        };
        key.public_key()
            .map_err(|_| bad("`x` is no Ed25519 public key"))?;
        Ok(Self(key))
    }
}
