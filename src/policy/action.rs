//! What a policy does to the requests it matches: limit them (with its bucket's terms), deny
//! them, let them past every limit, challenge them, or only classify them for overload
//! (`priority`).

use super::Limit;
use crate::identity::Challenge;
use std::fmt;

/// A policy's `action`, with what that action needs: only a `limit` policy has a bucket.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `"limit"`: take from the policy's bucket (the default).
    Limit(Box<Limit>),
    /// `"deny"`: refuse with 403, taking nothing from any bucket.
    Deny,
    /// `"allow"`: the request skips every limit.
    Allow,
    /// `"challenge"`: a page load without a good pass gets this challenge instead of the
    /// backend's page; a request that cannot show a page is refused (403).
    Challenge(Challenge),
    /// `"classify"`: only give the requests a `priority` (or `on_overload`); the default of a
    /// policy with those keys and no bucket keys.
    Classify,
}

impl Action {
    /// The words of `action` in config files, in the order of the variants.
    pub const WORDS: [&'static str; 5] = ["limit", "deny", "allow", "challenge", "classify"];

    /// The word in config files.
    pub fn word(&self) -> &'static str {
        match self {
            Self::Limit(_) => "limit",
            Self::Deny => "deny",
            Self::Allow => "allow",
            Self::Challenge(_) => "challenge",
            Self::Classify => "classify",
        }
    }

    /// The bucket's terms, if this is `limit`.
    pub fn limit(&self) -> Option<&Limit> {
        match self {
            Self::Limit(limit) => Some(limit.as_ref()),
            _ => None,
        }
    }

    /// The challenge this action sets, if it is `challenge`.
    pub fn challenge(&self) -> Option<&Challenge> {
        match self {
            Self::Challenge(challenge) => Some(challenge),
            _ => None,
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Challenge(challenge) => write!(f, "challenge ({challenge})"),
            _ => f.write_str(self.word()),
        }
    }
}
