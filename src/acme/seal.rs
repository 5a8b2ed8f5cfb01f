//! Private keys kept in Redis are sealed: ChaCha20-Poly1305 under a key derived from the
//! fleet's identity key, a random nonce each time, the text base64url (nonce, then sealed
//! bytes). A text that does not open (another fleet's key, tampering) is refused, never used.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305, NONCE_LEN};

/// Why a sealed text did not open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum SealError {
    /// No random nonce could be drawn.
    #[error("no randomness for a nonce")]
    Random,
    /// Not base64url, too short, or not sealed with this key.
    #[error("the sealed text does not open with this fleet's key")]
    WontOpen,
}

/// The sealing key.
pub(super) struct Sealer {
    key: LessSafeKey,
}

impl Sealer {
    /// A sealer keyed with `key` (32 bytes, derived for this use only).
    pub(super) fn new(key: [u8; 32]) -> Self {
        let unbound = UnboundKey::new(&CHACHA20_POLY1305, &key).expect("a 32-byte key");
        Self {
            key: LessSafeKey::new(unbound),
        }
    }

    /// `plain`, sealed, as text.
    pub(super) fn seal(&self, plain: &[u8]) -> Result<String, SealError> {
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|_| SealError::Random)?;
        let mut sealed = plain.to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::empty(),
                &mut sealed,
            )
            .map_err(|_| SealError::Random)?;
        let mut text = nonce.to_vec();
        text.extend(sealed);
        Ok(URL_SAFE_NO_PAD.encode(text))
    }

    /// What `text` sealed.
    pub(super) fn open(&self, text: &str) -> Result<Vec<u8>, SealError> {
        let mut bytes = URL_SAFE_NO_PAD
            .decode(text)
            .map_err(|_| SealError::WontOpen)?;
        if bytes.len() < NONCE_LEN {
            return Err(SealError::WontOpen);
        }
        let mut sealed = bytes.split_off(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(&bytes).map_err(|_| SealError::WontOpen)?;
        let plain = self
            .key
            .open_in_place(nonce, Aad::empty(), &mut sealed)
            .map_err(|_| SealError::WontOpen)?;
        Ok(plain.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_what_it_sealed_and_nothing_else() {
        let sealer = Sealer::new([7; 32]);
        let text = sealer.seal(b"-----BEGIN PRIVATE KEY-----").unwrap();
        assert!(!text.contains("PRIVATE"));
        assert_eq!(sealer.open(&text).unwrap(), b"-----BEGIN PRIVATE KEY-----");
        assert_ne!(sealer.seal(b"same").unwrap(), sealer.seal(b"same").unwrap());
        let other = Sealer::new([8; 32]);
        assert_eq!(other.open(&text), Err(SealError::WontOpen));
        let mut tampered = text.into_bytes();
        let last = tampered.len() - 2;
        tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).unwrap();
        assert_eq!(sealer.open(&tampered), Err(SealError::WontOpen));
        assert_eq!(sealer.open("!!"), Err(SealError::WontOpen));
    }
}
