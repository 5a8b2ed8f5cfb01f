//! The token a client presents (RFC 9577 §2.2): `Authorization: PrivateToken token="…"`, the
//! scheme in any case, the parameter quoted or not, other parameters ignored. A type 0x0002
//! token is exactly 2 + 32 + 32 + 32 + 256 bytes:
//!
//! ```text
//! struct {
//!     uint16 token_type = 0x0002;
//!     uint8 nonce[32];
//!     uint8 challenge_digest[32];
//!     uint8 token_key_id[32];
//!     uint8 authenticator[256];
//! } Token;
//! ```
//!
//! Reading is bounded: a value over [`MAX_HEADER`] bytes, or a token of any other length, is
//! malformed, and nothing here panics on what a client sends.

use super::challenge::TOKEN_TYPE;
use super::key::BASE64URL;
use base64::Engine;

/// A type 0x0002 token's length in bytes.
pub const TOKEN_LEN: usize = 2 + 32 + 32 + 32 + 256;

/// The length of what the authenticator signs: `token_type ‖ nonce ‖ challenge_digest ‖
/// token_key_id`.
pub const INPUT_LEN: usize = TOKEN_LEN - 256;

/// The longest `Authorization` value read.
pub const MAX_HEADER: usize = 4096;

/// The longest `token` parameter read: [`TOKEN_LEN`] bytes in base64url, padded.
const MAX_TOKEN_TEXT: usize = TOKEN_LEN.div_ceil(3) * 4;

/// The authentication scheme (RFC 9577 §2.2).
pub const SCHEME: &str = "PrivateToken";

/// A publicly verifiable token, read but not checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// [`TOKEN_TYPE`].
    pub token_type: u16,
    /// The client's random nonce: spent once.
    pub nonce: [u8; 32],
    /// SHA-256 of the TokenChallenge it answers.
    pub challenge_digest: [u8; 32],
    /// The id of the issuer key that signed it.
    pub token_key_id: [u8; 32],
    /// The issuer's RSA signature over [`Token::token_input`].
    pub authenticator: [u8; 256],
}

/// Why an `Authorization` value holds no token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Another scheme (`Bearer`, `Basic`, …): not Privacy Pass's.
    #[error("not the PrivateToken scheme")]
    OtherScheme,
    /// A token of another type than 0x0002.
    #[error("token type {0:#06x}, where 0x0002 is taken")]
    WrongType(u16),
    /// Too long, no `token` parameter (or two), not base64url, or not [`TOKEN_LEN`] bytes.
    #[error("malformed")]
    Malformed,
}

impl Token {
    /// The token of an `Authorization` value.
    pub fn from_authorization(value: &[u8]) -> Result<Self, TokenError> {
        if value.len() > MAX_HEADER {
            return Err(TokenError::Malformed);
        }
        let text = std::str::from_utf8(value).map_err(|_| TokenError::Malformed)?;
        let params = scheme_params(text).ok_or(TokenError::OtherScheme)?;
        let encoded = token_param(params)?;
        if encoded.len() > MAX_TOKEN_TEXT {
            return Err(TokenError::Malformed);
        }
        let bytes = BASE64URL
            .decode(encoded)
            .map_err(|_| TokenError::Malformed)?;
        Self::from_bytes(&bytes)
    }

    /// A token's bytes: its type first (a token of another type is [`TokenError::WrongType`]
    /// whatever its length), then exactly [`TOKEN_LEN`] bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, TokenError> {
        let token_type = match bytes {
            [hi, lo, ..] => u16::from_be_bytes([*hi, *lo]),
            _ => return Err(TokenError::Malformed),
        };
        if token_type != TOKEN_TYPE {
            return Err(TokenError::WrongType(token_type));
        }
        let Ok(bytes) = <&[u8; TOKEN_LEN]>::try_from(bytes) else {
            return Err(TokenError::Malformed);
        };
        let field = |at: usize| -> [u8; 32] {
            let mut out = [0u8; 32];
            out.copy_from_slice(&bytes[at..at + 32]);
            out
        };
        let mut authenticator = [0u8; 256];
        authenticator.copy_from_slice(&bytes[INPUT_LEN..]);
        Ok(Self {
            token_type,
            nonce: field(2),
            challenge_digest: field(34),
            token_key_id: field(66),
            authenticator,
        })
    }

    /// What the authenticator signs: the first [`INPUT_LEN`] bytes of the token.
    pub fn token_input(&self) -> [u8; INPUT_LEN] {
        let mut input = [0u8; INPUT_LEN];
        input[..2].copy_from_slice(&self.token_type.to_be_bytes());
        input[2..34].copy_from_slice(&self.nonce);
        input[34..66].copy_from_slice(&self.challenge_digest);
        input[66..].copy_from_slice(&self.token_key_id);
        input
    }
}

/// Whether an `Authorization` value is of the PrivateToken scheme (checked or not).
pub fn is_private_token(value: &[u8]) -> bool {
    std::str::from_utf8(value)
        .ok()
        .and_then(scheme_params)
        .is_some()
}

/// The parameters after the scheme, when the scheme is PrivateToken.
fn scheme_params(text: &str) -> Option<&str> {
    let text = text.trim_start_matches([' ', '\t']);
    let end = text.find([' ', '\t']).unwrap_or(text.len());
    text[..end]
        .eq_ignore_ascii_case(SCHEME)
        .then(|| &text[end..])
}

/// The value of the one `token` parameter among `params` (`name=value` or `name="value"`,
/// separated by commas).
fn token_param(params: &str) -> Result<&str, TokenError> {
    let mut rest = params;
    let mut found = None;
    loop {
        rest = rest.trim_start_matches([' ', '\t', ',']);
        if rest.is_empty() {
            return found.ok_or(TokenError::Malformed);
        }
        let (name, value, after) = param(rest).ok_or(TokenError::Malformed)?;
        if name.eq_ignore_ascii_case("token") {
            if found.is_some() {
                return Err(TokenError::Malformed);
            }
            found = Some(value);
        }
        rest = after;
    }
}

/// The first `name=value` of `text` and what follows it (a comma, or nothing).
fn param(text: &str) -> Option<(&str, &str, &str)> {
    let eq = text.find('=')?;
    let name = text[..eq].trim_end_matches([' ', '\t']);
    if name.is_empty() || !name.bytes().all(is_tchar) {
        return None;
    }
    let text = text[eq + 1..].trim_start_matches([' ', '\t']);
    let (value, after) = match text.strip_prefix('"') {
        Some(quoted) => {
            let end = closing_quote(quoted)?;
            (&quoted[..end], &quoted[end + 1..])
        }
        None => text.split_at(text.find([',', ' ', '\t']).unwrap_or(text.len())),
    };
    let after = after.trim_start_matches([' ', '\t']);
    (after.is_empty() || after.starts_with(',')).then_some((name, value, after))
}

/// Where a quoted string's closing quote stands (a backslash escapes the next byte).
fn closing_quote(quoted: &str) -> Option<usize> {
    let bytes = quoted.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => return Some(i),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    None
}

/// An RFC 9110 token character.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests;
