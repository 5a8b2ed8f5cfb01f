//! References: the request id a refusal carries (`ref`), as the control API looks it up.
//!
//! The grammar: 1 to 64 characters, each a hex digit (either case) or `-`. Floodgate's own ids
//! (32 lowercase hex digits) and UUIDs passed on by trusted proxies fit it; a lookup ignores
//! case. An id a client chose outside it (letters past `f`, `.`, `/`, `:`…) is still echoed in
//! `x-request-id` and `ref`, but no decision is kept under it and none can be looked up: a
//! reference never becomes a file name or a Redis key unchecked.

use std::fmt;

/// The longest reference.
pub const MAX_LEN: usize = 64;

/// A reference that fits the grammar, in lowercase.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reference(Box<str>);

/// Why a text is not a reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BadReference {
    /// Nothing.
    #[error("`ref` is empty")]
    Empty,
    /// More than [`MAX_LEN`] characters.
    #[error("`ref` is longer than 64 characters")]
    TooLong,
    /// A character other than a hex digit or `-`.
    #[error("`ref` holds a character other than a hex digit or `-`")]
    NotHex,
}

impl Reference {
    /// `text` as a reference, or why it is not one.
    pub fn parse(text: &str) -> Result<Self, BadReference> {
        match text.len() {
            0 => return Err(BadReference::Empty),
            n if n > MAX_LEN => return Err(BadReference::TooLong),
            _ => {}
        }
        if !text.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-') {
            return Err(BadReference::NotHex);
        }
        Ok(Self(text.to_ascii_lowercase().into_boxed_str()))
    }

    /// The reference of a request id, when it fits the grammar (else nothing is kept).
    pub fn of_request_id(id: &[u8]) -> Option<Self> {
        std::str::from_utf8(id)
            .ok()
            .and_then(|t| Self::parse(t).ok())
    }

    /// The reference as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floodgate_ids_and_uuids_are_references_in_lowercase() {
        let id = "0123456789abcdef0123456789abcdef";
        assert_eq!(Reference::parse(id).unwrap().as_str(), id);
        let uuid = "3F2504E0-4F89-11D3-9A0C-0305E82C3301";
        assert_eq!(
            Reference::parse(uuid).unwrap().as_str(),
            uuid.to_ascii_lowercase()
        );
    }

    #[test]
    fn anything_else_is_refused_with_its_reason() {
        assert_eq!(Reference::parse(""), Err(BadReference::Empty));
        assert_eq!(
            Reference::parse(&"a".repeat(65)),
            Err(BadReference::TooLong)
        );
        for bad in ["../etc", "abc/def", "xyz", "a b", "ab:cd", "a*", "é", "%2e"] {
            assert_eq!(Reference::parse(bad), Err(BadReference::NotHex), "{bad}");
        }
        assert!(Reference::of_request_id(b"client.chosen").is_none());
        assert!(Reference::of_request_id(&[0xff, 0x61]).is_none());
    }
}
