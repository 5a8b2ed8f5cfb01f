//! The secret key identity digests are made with (keyed BLAKE3), so that a digest in
//! `/offenders`, the access log or a Redis key cannot be reversed by hashing every phone
//! number or address until one matches.

use std::fmt;

/// The fewest bytes of text `identity.hash_key` may hold.
pub const MIN_SECRET_LEN: usize = 32;

/// The context string of the key derivation: changing it changes every digest.
const DERIVATION_CONTEXT: &str = "floodgate 2025 identity digest key";

/// The 32-byte key of identity digests. Never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct IdentityKey([u8; 32]);

/// Why an identity key could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityKeyError {
    /// The secret text is shorter than [`MIN_SECRET_LEN`] bytes.
    #[error("an identity hash key needs at least {MIN_SECRET_LEN} bytes of text, not {0}")]
    TooShort(usize),
    /// The operating system gave no randomness.
    #[error("no randomness for an identity hash key: {0}")]
    NoRandomness(String),
}

impl IdentityKey {
    /// The key derived from secret text (`identity.hash_key`, or the fleet's key in Redis): the
    /// same text always gives the same key.
    pub fn from_secret(text: &str) -> Result<Self, IdentityKeyError> {
        if text.len() < MIN_SECRET_LEN {
            return Err(IdentityKeyError::TooShort(text.len()));
        }
        Ok(Self(blake3::derive_key(
            DERIVATION_CONTEXT,
            text.as_bytes(),
        )))
    }

    /// A fresh random key (a process's own when nothing else is configured).
    pub fn random() -> Result<Self, IdentityKeyError> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| IdentityKeyError::NoRandomness(e.to_string()))?;
        Ok(Self(key))
    }

    /// Random secret text for a fleet to share: 64 hex digits (256 bits).
    pub fn random_secret() -> Result<String, IdentityKeyError> {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let key = Self::random()?;
        Ok(key
            .0
            .iter()
            .flat_map(|b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 0xf)]])
            .map(char::from)
            .collect())
    }

    /// A key of exactly these bytes (tests, tools).
    pub const fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// A key for another purpose, named by `context`, derived from this one: every instance
    /// sharing the identity key derives the same (the challenge's signing key).
    pub fn derive(&self, context: &str) -> [u8; 32] {
        blake3::derive_key(context, &self.0)
    }

    /// The key's bytes, for the keyed hash.
    pub(crate) fn bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Debug for IdentityKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("IdentityKey(<secret>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_gives_one_key_and_short_secrets_are_refused() {
        let text = "a shared secret of at least 32 bytes";
        assert_eq!(
            IdentityKey::from_secret(text),
            IdentityKey::from_secret(text)
        );
        assert_ne!(
            IdentityKey::from_secret(text),
            IdentityKey::from_secret(&text.replace('a', "b"))
        );
        assert_eq!(
            IdentityKey::from_secret("short"),
            Err(IdentityKeyError::TooShort(5))
        );
    }

    #[test]
    fn random_keys_differ_and_are_never_printed() {
        let (a, b) = (
            IdentityKey::random().unwrap(),
            IdentityKey::random().unwrap(),
        );
        assert_ne!(a, b);
        assert_eq!(format!("{a:?}"), "IdentityKey(<secret>)");
        let secret = IdentityKey::random_secret().unwrap();
        assert_eq!(secret.len(), 64);
        assert!(IdentityKey::from_secret(&secret).is_ok());
    }
}
