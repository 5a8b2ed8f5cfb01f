//! What a policy does to the requests it matches: limit them, deny them, or let them past
//! every limit.

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
}

impl Action {
    /// Every action.
    pub const ALL: [Action; 3] = [Self::Limit, Self::Deny, Self::Allow];

    /// The action `word` names, or `None`.
    pub fn from_word(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|action| action.word() == word)
    }

    /// The word in config files.
    pub fn word(self) -> &'static str {
        match self {
            Self::Limit => "limit",
            Self::Deny => "deny",
            Self::Allow => "allow",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}
