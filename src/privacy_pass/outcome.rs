//! How a token fared: [`Redemption`], and why an invalid one is ([`Invalid`]). Every outcome
//! but [`Redemption::Redeemed`] is the challenge again.

use crate::limiter::LedgerError;
use std::sync::Arc;

/// A token's redemption.
#[derive(Debug, Clone)]
pub enum Redemption {
    /// Valid and spent now: a solved challenge.
    Redeemed {
        /// The issuer whose key signed it.
        issuer: Arc<str>,
    },
    /// Valid, but its nonce was spent before (here or on another instance).
    Replayed {
        /// The issuer whose key signed it.
        issuer: Arc<str>,
    },
    /// Not a token this fleet takes.
    Invalid {
        /// The issuer whose key id it names, once that is known.
        issuer: Option<Arc<str>>,
        /// Why.
        why: Invalid,
    },
    /// Its key id is none of the configured issuers' current keys.
    UnknownKey,
    /// Valid, but the spent set could not be asked or is full: refused (fail closed).
    Unavailable {
        /// The issuer whose key signed it.
        issuer: Arc<str>,
        /// What the ledger said.
        cause: LedgerError,
    },
}

/// Why a token is invalid, in the order the checks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalid {
    /// Not a `PrivateToken` value with one `token` of the right length in base64url.
    Malformed,
    /// A token type other than 0x0002.
    WrongType,
    /// It answers no live challenge of its issuer: another issuer's name, another origin, a
    /// window that is over, or a challenge Floodgate never made.
    BadChallenge,
    /// The issuer's key did not sign it (a bit flipped, a forgery).
    BadSignature,
}

impl Redemption {
    /// The `result` label of `floodgate_privacy_pass_total`: `redeemed`, `replayed`,
    /// `invalid`, `unknown_key`; and `unavailable` when the spent set could not answer (the
    /// token was valid, so it is none of the others; the store's own error is counted
    /// where the store is).
    pub fn result_word(&self) -> &'static str {
        match self {
            Self::Redeemed { .. } => "redeemed",
            Self::Replayed { .. } => "replayed",
            Self::Invalid { .. } => "invalid",
            Self::UnknownKey => "unknown_key",
            Self::Unavailable { .. } => "unavailable",
        }
    }

    /// The issuer the token names, once known (its key was found).
    pub fn issuer(&self) -> Option<&Arc<str>> {
        match self {
            Self::Redeemed { issuer }
            | Self::Replayed { issuer }
            | Self::Unavailable { issuer, .. } => Some(issuer),
            Self::Invalid { issuer, .. } => issuer.as_ref(),
            Self::UnknownKey => None,
        }
    }
}

impl Invalid {
    /// The reason as a word, for logs and the decision record.
    pub fn word(self) -> &'static str {
        match self {
            Self::Malformed => "malformed",
            Self::WrongType => "wrong_type",
            Self::BadChallenge => "bad_challenge",
            Self::BadSignature => "bad_signature",
        }
    }
}
