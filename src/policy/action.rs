//! What a policy does to the requests it matches: limit them, deny them, let them past every
//! limit, challenge them, or only classify them for overload (`priority`).

use crate::identity::{Bind, Challenge, ChallengeKind, DEFAULT_DIFFICULTY};
use std::fmt;

/// A policy's `action`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Action {
    /// `"limit"`: take from the policy's bucket (the default).
    #[default]
    Limit,
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
    /// The action `word` names (a `challenge` with the default challenge), or `None`.
    pub fn from_word(word: &str) -> Option<Self> {
        let challenge = Challenge {
            kind: ChallengeKind::Pow {
                difficulty: DEFAULT_DIFFICULTY,
            },
            bind: Bind::default(),
        };
        [
            Self::Limit,
            Self::Deny,
            Self::Allow,
            Self::Challenge(challenge),
            Self::Classify,
        ]
        .into_iter()
        .find(|action| action.word() == word)
    }

    /// The word in config files.
    pub fn word(self) -> &'static str {
        match self {
            Self::Limit => "limit",
            Self::Deny => "deny",
            Self::Allow => "allow",
            Self::Challenge(_) => "challenge",
            Self::Classify => "classify",
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
