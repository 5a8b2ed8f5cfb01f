//! Privacy Pass (RFC 9576, 9577, 9578): tokens from issuers an operator trusts let an attested
//! client past the challenge without a proof of work. Publicly verifiable tokens only (type
//! 0x0002, Blind RSA 2048).
//!
//! [`IssuerKey`] is an issuer's key; [`TokenChallenge`] what a challenge answer offers
//! (`WWW-Authenticate: PrivateToken challenge="…", token-key="…"`); [`Token`] what a client
//! presents (`Authorization: PrivateToken token="…"`); [`Windows`] the time windows a
//! challenge's redemption context is made of; [`Redeemer`] checks a token and spends its nonce
//! fleet-wide; `directory` keeps an issuer's keys from its directory; [`PrivacyPassSettings`] is
//! `[challenge.privacy_pass]`.

mod challenge;
pub mod directory;
mod issuer;
mod key;
mod offer;
mod outcome;
mod redeem;
mod settings;
mod token;
mod window;

pub use challenge::{ChallengeError, TokenChallenge, MAX_ISSUER_NAME, MAX_ORIGIN_INFO, TOKEN_TYPE};
pub use issuer::Issuer;
pub use key::{IssuerKey, KeyError, MODULUS_BITS, SALT_LEN};
pub use offer::Offer;
pub use outcome::{Invalid, Redemption};
pub use redeem::{spent_id, Redeemer, SCOPE};
pub use settings::{DirectorySource, IssuerSettings, KeySource, PrivacyPassSettings};
pub use token::{is_private_token, Token, TokenError, INPUT_LEN, MAX_HEADER, SCHEME, TOKEN_LEN};
pub use window::{Windows, DEFAULT_WINDOW};

/// The issuer and client of the tests (tests/common/issuer.rs, shared with the integration
/// tests).
#[cfg(test)]
#[path = "../../tests/common/issuer.rs"]
pub(crate) mod test_issuer;
