//! References: the request id a refusal carries (`ref`), as the control API looks it up.
//!
//! The grammar: 1 to 64 characters, each a hex digit (either case) or `-`. Floodgate's own ids
//! (32 lowercase hex digits) and UUIDs passed on by trusted proxies fit it; a lookup ignores
//! case. An id a client chose outside it (letters past `f`, `.`, `/`, `:`…) is still echoed in
//! `x-request-id` and `ref`, but no decision is kept under it and none can be looked up: a
//! reference never becomes a file name or a Redis key unchecked.
//!
//! Every request's record holds one, so Floodgate's own ids are kept as the 16 bytes their
//! digits spell, without an allocation; any other reference as its text.

use std::fmt;

/// The longest reference.
pub const MAX_LEN: usize = 64;

/// How many digits Floodgate's own ids have.
const ID_DIGITS: usize = 32;

/// A reference that fits the grammar, in lowercase.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reference(Form);

/// How a reference is held: each reference has exactly one form, so forms compare as the
/// texts do.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Form {
    /// [`ID_DIGITS`] hex digits (Floodgate's own ids), as the bytes they spell.
    Id([u8; ID_DIGITS / 2]),
    /// Any other reference, in lowercase.
    Text(Box<str>),
}

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
        Ok(Self(match id(text) {
            Some(id) => Form::Id(id.to_be_bytes()),
            None => Form::Text(text.to_ascii_lowercase().into_boxed_str()),
        }))
    }

    /// The reference of a request id, when it fits the grammar (else nothing is kept).
    pub fn of_request_id(id: &[u8]) -> Option<Self> {
        std::str::from_utf8(id)
            .ok()
            .and_then(|t| Self::parse(t).ok())
    }

    /// The bytes it holds on the heap (none for Floodgate's own ids).
    pub fn heap_size(&self) -> usize {
        match &self.0 {
            Form::Id(_) => 0,
            Form::Text(text) => text.len(),
        }
    }
}

/// `text`'s value when it is [`ID_DIGITS`] hex digits, read a digit at a time (`from_str_radix`
/// checks each digit for overflow, which 32 digits cannot reach).
fn id(text: &str) -> Option<u128> {
    if text.len() != ID_DIGITS {
        return None;
    }
    text.bytes().try_fold(0u128, |id, b| {
        let digit = char::from(b).to_digit(16)?;
        Some(id << 4 | u128::from(digit))
    })
}

/// The reference as text, in lowercase.
impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Form::Id(bytes) => write!(f, "{:032x}", u128::from_be_bytes(*bytes)),
            Form::Text(text) => f.write_str(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floodgate_ids_and_uuids_are_references_in_lowercase() {
        let id = "0123456789abcdef0123456789abcdef";
        assert_eq!(Reference::parse(id).unwrap().to_string(), id);
        let uuid = "3F2504E0-4F89-11D3-9A0C-0305E82C3301";
        assert_eq!(
            Reference::parse(uuid).unwrap().to_string(),
            uuid.to_ascii_lowercase()
        );
    }

    #[test]
    fn floodgate_ids_are_held_as_bytes_without_an_allocation_and_compare_as_text() {
        let upper = Reference::parse("000000000000000000000000000000AB").unwrap();
        assert_eq!(upper.heap_size(), 0);
        assert_eq!(upper.to_string(), "000000000000000000000000000000ab");
        assert_eq!(
            upper,
            Reference::parse("000000000000000000000000000000ab").unwrap()
        );
        let dashed = Reference::parse("00000000-0000-0000-0000-0000000000").unwrap();
        assert_eq!(dashed.heap_size(), 34);
        assert_ne!(
            Reference::parse("ab").unwrap(),
            Reference::parse("0ab").unwrap()
        );
        assert!(std::mem::size_of::<Reference>() <= 24);
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
