//! References: the request id a refusal carries (`ref`), as the control API looks it up.
//!
//! The grammar: Floodgate's own ids, `fg-` and 32 hex digits (128 random bits); or 1 to 64
//! characters, each a hex digit or `-`, as a trusted proxy may pass on (UUIDs, nginx's
//! `$request_id`). A lookup ignores case. Only Floodgate makes the first form: an incoming id
//! in it is never kept (`proxy::request_id`), so no one can present a reference as theirs and
//! have their request's decision kept under it. A trusted proxy's id outside the grammar is
//! still echoed in `x-request-id` and `ref`, but no decision is kept under it and none can be
//! looked up: a reference never becomes a file name or a Redis key unchecked.
//!
//! Every request's record holds one, so 32-digit ids (Floodgate's, and those passed on) are
//! kept as the 16 bytes their digits spell, without an allocation; any other reference as its
//! text.

use std::fmt;

/// The longest reference.
pub const MAX_LEN: usize = 64;

/// How many digits a 32-digit id has (Floodgate's own after their prefix).
const ID_DIGITS: usize = 32;

/// What Floodgate's own ids begin with; no other reference does (`g` is no hex digit).
const OWN_PREFIX: &str = "fg-";

/// How long Floodgate's own ids are: the prefix and 32 hex digits.
const OWN_LEN: usize = OWN_PREFIX.len() + ID_DIGITS;

/// A reference that fits the grammar, in lowercase.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reference(Form);

/// How a reference is held: each reference has exactly one form, so forms compare as the
/// texts do.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Form {
    /// Floodgate's own id, as the 16 bytes its digits spell.
    Own([u8; ID_DIGITS / 2]),
    /// [`ID_DIGITS`] hex digits passed on by a trusted proxy, as the bytes they spell.
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
    /// A character other than a hex digit or `-` (after `fg-`, other than a hex digit).
    #[error("`ref` is neither `fg-` and 32 hex digits nor hex digits and `-`")]
    NotHex,
}

impl Reference {
    /// `text` as a reference, or why it is not one.
    pub fn parse(text: &str) -> Result<Self, BadReference> {
        if is_own_form(text.as_bytes()) {
            let digits = &text[OWN_PREFIX.len()..];
            return match id(digits) {
                Some(id) if text.len() == OWN_LEN => Ok(Self(Form::Own(id.to_be_bytes()))),
                _ => Err(BadReference::NotHex),
            };
        }
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

    /// The reference of a request id a trusted proxy passed on, when it fits the grammar and
    /// is not in Floodgate's own form (else nothing is kept).
    pub fn of_request_id(id: &[u8]) -> Option<Self> {
        if is_own_form(id) {
            return None;
        }
        std::str::from_utf8(id)
            .ok()
            .and_then(|t| Self::parse(t).ok())
    }

    /// Floodgate's own reference of the 128 bits `bits`, and its text (`fg-` and 32
    /// lowercase hex digits), made without parsing or allocating.
    pub fn own(bits: [u8; ID_DIGITS / 2]) -> (Self, [u8; OWN_LEN]) {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut text = [0u8; OWN_LEN];
        let (prefix, digits) = text.split_at_mut(OWN_PREFIX.len());
        prefix.copy_from_slice(OWN_PREFIX.as_bytes());
        for (pair, byte) in digits.chunks_exact_mut(2).zip(bits) {
            pair[0] = DIGITS[usize::from(byte >> 4)];
            pair[1] = DIGITS[usize::from(byte & 0xf)];
        }
        (Self(Form::Own(bits)), text)
    }

    /// Whether this is one of Floodgate's own references.
    pub fn is_own(&self) -> bool {
        matches!(self.0, Form::Own(_))
    }

    /// The bytes it holds on the heap (none for Floodgate's own ids).
    pub fn heap_size(&self) -> usize {
        match &self.0 {
            Form::Own(_) | Form::Id(_) => 0,
            Form::Text(text) => text.len(),
        }
    }
}

/// Whether `text` is in Floodgate's own form: it begins with `fg-`, in either case.
pub fn is_own_form(text: &[u8]) -> bool {
    text.get(..OWN_PREFIX.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(OWN_PREFIX.as_bytes()))
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
            Form::Own(bytes) => write!(f, "{OWN_PREFIX}{:032x}", u128::from_be_bytes(*bytes)),
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
    fn floodgate_own_ids_are_their_own_form_and_never_taken_from_a_request() {
        let (own, text) = Reference::own([0xab; 16]);
        let text = std::str::from_utf8(&text).unwrap();
        assert_eq!(text, format!("fg-{}", "ab".repeat(16)));
        assert_eq!(own.to_string(), text);
        assert!(own.is_own() && own.heap_size() == 0);
        assert_eq!(Reference::parse(&text.to_uppercase()).unwrap(), own);
        // The same digits without the prefix are another reference.
        let bare = Reference::parse(&"ab".repeat(16)).unwrap();
        assert!(!bare.is_own());
        assert_ne!(bare, own);
        // An id passed on in Floodgate's form is not kept.
        assert!(Reference::of_request_id(text.as_bytes()).is_none());
        assert!(Reference::of_request_id(text.to_uppercase().as_bytes()).is_none());
        for bad in [
            "fg-",
            "fg-abc",
            &format!("{text}0"),
            &format!("fg-{}", "g".repeat(32)),
        ] {
            assert_eq!(Reference::parse(bad), Err(BadReference::NotHex), "{bad}");
        }
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
