//! The TokenChallenge a challenge answer offers (RFC 9577 §2.1), in its TLS presentation
//! encoding:
//!
//! ```text
//! struct {
//!     uint16 token_type;
//!     opaque issuer_name<1..2^16-1>;
//!     opaque redemption_context<0..32>;
//!     opaque origin_info<0..2^16-1>;
//! } TokenChallenge;
//! ```
//!
//! A token names its challenge by the SHA-256 of these bytes (`challenge_digest`). Floodgate's
//! challenges always carry a 32-byte redemption context (its time window) and limit issuer
//! names to 255 bytes.

use super::key::BASE64URL;
use base64::Engine;
use sha2::{Digest, Sha256};

/// Publicly verifiable tokens (Blind RSA 2048, SHA-384, RFC 9578 §6): the one type taken.
pub const TOKEN_TYPE: u16 = 0x0002;

/// The longest issuer name taken (RFC 9577 allows 65535 bytes; this project, 255).
pub const MAX_ISSUER_NAME: usize = 255;

/// The longest `origin_info` (its 16-bit length).
pub const MAX_ORIGIN_INFO: usize = u16::MAX as usize;

/// A challenge for a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenChallenge {
    /// [`TOKEN_TYPE`].
    pub token_type: u16,
    /// The issuer whose tokens are asked for (1 to [`MAX_ISSUER_NAME`] bytes).
    pub issuer_name: String,
    /// What ties a token to this challenge's time window (see `Windows`).
    pub redemption_context: [u8; 32],
    /// The origins a token may be redeemed at, comma-separated; empty: any.
    pub origin_info: String,
}

/// Why a challenge was not made or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChallengeError {
    /// The issuer name is empty or longer than [`MAX_ISSUER_NAME`] bytes.
    #[error("an issuer name must have 1 to {MAX_ISSUER_NAME} bytes, not {0}")]
    IssuerName(usize),
    /// An origin name is empty, or holds a comma, a space or a control character.
    #[error("{0:?} is not an origin name (a host name, with its port if not the default)")]
    OriginName(String),
    /// `origin_info` is longer than [`MAX_ORIGIN_INFO`] bytes.
    #[error("origin_info must have at most {MAX_ORIGIN_INFO} bytes, not {0}")]
    OriginInfo(usize),
    /// Bytes that are no TokenChallenge of Floodgate's form.
    #[error("not a TokenChallenge with a 32-byte redemption context")]
    Malformed,
}

impl TokenChallenge {
    /// A type 0x0002 challenge of `issuer_name` for `redemption_context` and `origin_info`.
    pub fn new(
        issuer_name: &str,
        redemption_context: [u8; 32],
        origin_info: &str,
    ) -> Result<Self, ChallengeError> {
        if issuer_name.is_empty() || issuer_name.len() > MAX_ISSUER_NAME {
            return Err(ChallengeError::IssuerName(issuer_name.len()));
        }
        if origin_info.len() > MAX_ORIGIN_INFO {
            return Err(ChallengeError::OriginInfo(origin_info.len()));
        }
        Ok(Self {
            token_type: TOKEN_TYPE,
            issuer_name: issuer_name.to_owned(),
            redemption_context,
            origin_info: origin_info.to_owned(),
        })
    }

    /// The encoding (a field past its length limit is cut there: [`TokenChallenge::new`]
    /// refuses such fields).
    pub fn to_bytes(&self) -> Vec<u8> {
        let issuer = cut(self.issuer_name.as_bytes());
        let origins = cut(self.origin_info.as_bytes());
        let mut out = Vec::with_capacity(2 + 2 + issuer.len() + 1 + 32 + 2 + origins.len());
        out.extend_from_slice(&self.token_type.to_be_bytes());
        out.extend_from_slice(&(issuer.len() as u16).to_be_bytes());
        out.extend_from_slice(issuer);
        out.push(32);
        out.extend_from_slice(&self.redemption_context);
        out.extend_from_slice(&(origins.len() as u16).to_be_bytes());
        out.extend_from_slice(origins);
        out
    }

    /// The encoding in base64url, unpadded (a `WWW-Authenticate` challenge's `challenge`).
    pub fn to_base64url(&self) -> String {
        BASE64URL.encode(self.to_bytes())
    }

    /// SHA-256 of the encoding: the `challenge_digest` a token answering it carries.
    pub fn digest(&self) -> [u8; 32] {
        Sha256::digest(self.to_bytes()).into()
    }

    /// Reads an encoding (with a 32-byte redemption context, and nothing after it).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ChallengeError> {
        let mut reader = Reader(bytes);
        let token_type = u16::from_be_bytes(reader.take_array()?);
        let issuer_len = usize::from(u16::from_be_bytes(reader.take_array()?));
        let issuer_name = text(reader.take(issuer_len)?)?;
        let [context_len] = reader.take_array()?;
        let redemption_context = match context_len {
            32 => reader.take_array()?,
            _ => return Err(ChallengeError::Malformed),
        };
        let origin_len = usize::from(u16::from_be_bytes(reader.take_array()?));
        let origin_info = text(reader.take(origin_len)?)?;
        if !reader.0.is_empty() || issuer_name.is_empty() {
            return Err(ChallengeError::Malformed);
        }
        Ok(Self {
            token_type,
            issuer_name,
            redemption_context,
            origin_info,
        })
    }
}

/// `bytes`, at most as many as a 16-bit length counts.
fn cut(bytes: &[u8]) -> &[u8] {
    &bytes[..bytes.len().min(MAX_ORIGIN_INFO)]
}

fn text(bytes: &[u8]) -> Result<String, ChallengeError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| ChallengeError::Malformed)
}

/// Bytes read from the front.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], ChallengeError> {
        if self.0.len() < n {
            return Err(ChallengeError::Malformed);
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn take_array<const N: usize>(&mut self) -> Result<[u8; N], ChallengeError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::privacy_pass::test_issuer::challenge_bytes;

    #[test]
    fn the_encoding_is_rfc_9577s_and_round_trips() {
        let challenge = TokenChallenge::new("issuer.example", [7; 32], "a.example,b.example");
        let challenge = challenge.unwrap();
        let expected = challenge_bytes("issuer.example", &[7; 32], "a.example,b.example");
        assert_eq!(challenge.to_bytes(), expected);
        assert_eq!(&expected[..4], &[0, 2, 0, 14]);
        assert_eq!(TokenChallenge::from_bytes(&expected), Ok(challenge.clone()));
        let digest: [u8; 32] = Sha256::digest(&expected).into();
        assert_eq!(challenge.digest(), digest);
        let text = challenge.to_base64url();
        assert!(!text.contains(['=', '+', '/']), "{text}");
        assert_eq!(BASE64URL.decode(&text).unwrap(), expected);
    }

    #[test]
    fn an_empty_origin_info_is_two_zero_bytes() {
        let challenge = TokenChallenge::new("i", [0; 32], "").unwrap();
        let bytes = challenge.to_bytes();
        assert_eq!(bytes.len(), 2 + 2 + 1 + 1 + 32 + 2);
        assert_eq!(&bytes[bytes.len() - 2..], &[0, 0]);
        assert_eq!(TokenChallenge::from_bytes(&bytes), Ok(challenge));
    }

    #[test]
    fn issuer_names_of_0_or_over_255_bytes_are_refused() {
        let long = "i".repeat(256);
        assert_eq!(
            TokenChallenge::new(&long, [0; 32], ""),
            Err(ChallengeError::IssuerName(256))
        );
        assert!(TokenChallenge::new(&long[1..], [0; 32], "").is_ok());
        assert_eq!(
            TokenChallenge::new("", [0; 32], ""),
            Err(ChallengeError::IssuerName(0))
        );
        let origins = "o".repeat(MAX_ORIGIN_INFO + 1);
        assert_eq!(
            TokenChallenge::new("i", [0; 32], &origins),
            Err(ChallengeError::OriginInfo(MAX_ORIGIN_INFO + 1))
        );
    }

    #[test]
    fn bytes_cut_short_or_running_over_are_malformed() {
        let bytes = TokenChallenge::new("issuer", [1; 32], "o")
            .unwrap()
            .to_bytes();
        for end in 0..bytes.len() {
            let cut = TokenChallenge::from_bytes(&bytes[..end]);
            assert_eq!(cut, Err(ChallengeError::Malformed), "{end}");
        }
        let over = [&bytes[..], &[0]].concat();
        assert_eq!(
            TokenChallenge::from_bytes(&over),
            Err(ChallengeError::Malformed)
        );
        let no_context = challenge_bytes("issuer", &[], "o");
        assert_eq!(
            TokenChallenge::from_bytes(&no_context),
            Err(ChallengeError::Malformed)
        );
    }
}
