//! The caller's digest: a keyed BLAKE3 hash of the source and value that identified it. The one
//! function that makes it ([`Identity::of`]) lives here, so every digest (a bucket's key, an
//! operator's ban, the offenders view) is made the same way and can never drift.

use crate::identity_key::IdentityKey;
use std::fmt;

/// A caller, as a digest of the source and value that identified it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Identity([u8; 16]);

impl Identity {
    /// The identity whose source is `tag` and whose raw value is `value`, digested with `key`.
    pub fn of(key: &IdentityKey, tag: &str, value: &[u8]) -> Self {
        let mut hasher = blake3::Hasher::new_keyed(key.bytes());
        hasher.update(tag.as_bytes());
        hasher.update(&[0]);
        hasher.update(value);
        let mut digest = [0u8; 16];
        digest.copy_from_slice(&hasher.finalize().as_bytes()[..16]);
        Self(digest)
    }

    /// The one identity of every request that no source identifies.
    pub fn anonymous(key: &IdentityKey) -> Self {
        Self::of(key, "anonymous", b"")
    }

    /// The first 64 bits of the digest, uniformly distributed: a ready-made hash.
    pub fn prefix_u64(&self) -> u64 {
        let mut first = [0u8; 8];
        first.copy_from_slice(&self.0[..8]);
        u64::from_le_bytes(first)
    }

    /// The digest as 32 lowercase hex digits, safe to show and to put in store keys.
    pub fn hex(&self) -> String {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = String::with_capacity(32);
        for b in self.0 {
            out.push(DIGITS[usize::from(b >> 4)] as char);
            out.push(DIGITS[usize::from(b & 0xf)] as char);
        }
        out
    }

    /// The identity whose [`hex`](Self::hex) is `text`, if it is 32 hex digits.
    pub fn from_hex(text: &str) -> Option<Self> {
        if text.len() != 32 || !text.is_ascii() {
            return None;
        }
        let mut digest = [0u8; 16];
        for (i, byte) in digest.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(Self(digest))
    }
}

impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Identity({})", &self.hex()[..12])
    }
}
