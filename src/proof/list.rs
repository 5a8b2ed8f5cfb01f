//! `by = "list"`: the values a file lists, one a line: a raw key, or `sha256:<hex>` of one. A
//! value is proven when its SHA-256 is a listed digest or the digest of a listed raw key, so a
//! value is only ever compared with what it hashes to (a client sending `sha256:…` as its key
//! is just another raw value). Blank lines and lines starting with `#` are skipped.

use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::fmt;

/// The values of a key list, as SHA-256 digests (raw keys are hashed as they are read).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct KeyList {
    digests: HashSet<[u8; 32]>,
    /// Whether any line held a raw key (such a file must be kept from other users).
    has_raw: bool,
}

/// A line of a key list that is neither a key nor a digest.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct BadLine {
    /// The line's number, from 1.
    pub line: usize,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl KeyList {
    /// The list in `text`.
    pub fn parse(text: &str) -> Result<Self, BadLine> {
        let mut list = Self::default();
        for (i, line) in text.lines().enumerate() {
            let line_no = i + 1;
            let entry = line.trim_ascii();
            if entry.is_empty() || entry.starts_with('#') {
                continue;
            }
            let digest = match entry.strip_prefix("sha256:") {
                Some(hex) => from_hex(hex).ok_or(BadLine {
                    line: line_no,
                    reason: "`sha256:` must be followed by 64 hex digits",
                })?,
                None if entry.len() > crate::identity::MAX_VALUE_LEN => {
                    return Err(BadLine {
                        line: line_no,
                        reason: "a key longer than 4096 bytes names no one",
                    })
                }
                None => {
                    list.has_raw = true;
                    Sha256::digest(entry.as_bytes()).into()
                }
            };
            list.digests.insert(digest);
        }
        Ok(list)
    }

    /// Whether `value` is listed.
    pub fn holds(&self, value: &[u8]) -> bool {
        !self.digests.is_empty()
            && self
                .digests
                .contains(&<[u8; 32]>::from(Sha256::digest(value)))
    }

    /// Whether a line held a raw key.
    pub fn has_raw_keys(&self) -> bool {
        self.has_raw
    }

    /// How many values are listed.
    pub fn len(&self) -> usize {
        self.digests.len()
    }

    /// Whether no value is listed.
    pub fn is_empty(&self) -> bool {
        self.digests.is_empty()
    }
}

impl fmt::Debug for KeyList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyList({} values)", self.digests.len())
    }
}

/// 64 hex digits as 32 bytes.
fn from_hex(hex: &str) -> Option<[u8; 32]> {
    let hex = hex.as_bytes();
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in hex.chunks(2).enumerate() {
        let digit = |b: u8| (b as char).to_digit(16);
        out[i] = (digit(pair[0])? * 16 + digit(pair[1])?) as u8;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_keys_and_digests_are_held_and_nothing_else() {
        let digest_of_b = format!("sha256:{:x}", Sha256::digest(b"key-b"));
        let text = format!("# keys\nkey-a\n\n  {digest_of_b}  \n");
        let list = KeyList::parse(&text).unwrap();
        assert_eq!(list.len(), 2);
        assert!(list.holds(b"key-a"));
        assert!(list.holds(b"key-b"), "by its digest");
        assert!(
            !list.holds(digest_of_b.as_bytes()),
            "a digest line is no raw key"
        );
        assert!(!list.holds(b"key-c"));
        assert!(list.has_raw_keys());
        let digests_only = KeyList::parse(&digest_of_b).unwrap();
        assert!(!digests_only.has_raw_keys());
    }

    #[test]
    fn a_bad_digest_line_is_named() {
        let e = KeyList::parse("a\nsha256:12zz\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert_eq!(
            e.to_string(),
            "line 2: `sha256:` must be followed by 64 hex digits"
        );
    }
}
