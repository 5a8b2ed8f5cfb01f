//! The manual switch (`PUT /v1/overload`): `challenge` applies every `on_overload =
//! "challenge"` now, whatever the load ("under attack"); `shed` also sheds `low` requests now;
//! `auto` returns to measuring. A switch ends by itself when its time is up.

use serde::{Deserialize, Serialize};

/// A switch's level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Measure: overload is what the pools show.
    #[default]
    Auto,
    /// Challenge now, as if every pool were overloaded.
    Challenge,
    /// Challenge now and shed `low` requests.
    Shed,
}

impl Level {
    /// Every level, in gauge order.
    pub const ALL: [Level; 3] = [Level::Auto, Level::Challenge, Level::Shed];

    /// The level `word` names, if any.
    pub fn from_word(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.word() == word)
    }

    /// The word of the API and the logs.
    pub fn word(self) -> &'static str {
        match self {
            Level::Auto => "auto",
            Level::Challenge => "challenge",
            Level::Shed => "shed",
        }
    }

    /// The value of `floodgate_overload_level`.
    pub fn gauge(self) -> i64 {
        self as i64
    }
}

/// A switch an operator set: its level, until when (Unix ms), by whom and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Switch {
    /// The level.
    pub level: Level,
    /// When it ends by itself (Unix ms).
    pub until_ms: u64,
    /// The name of the token that set it.
    pub by: String,
    /// When it was set (Unix ms).
    pub at_ms: u64,
}

impl Switch {
    /// The level in force at `now_ms`: the switch's until it ends, then `auto`.
    pub fn level_at(&self, now_ms: u64) -> Level {
        match now_ms < self.until_ms {
            true => self.level,
            false => Level::Auto,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_switch_ends_by_itself() {
        let switch = Switch {
            level: Level::Shed,
            until_ms: 2_000,
            by: "ops".into(),
            at_ms: 1_000,
        };
        assert_eq!(switch.level_at(1_999), Level::Shed);
        assert_eq!(switch.level_at(2_000), Level::Auto);
    }

    #[test]
    fn levels_read_as_their_words() {
        for level in Level::ALL {
            assert_eq!(Level::from_word(level.word()), Some(level));
        }
        assert_eq!(Level::from_word("panic"), None);
        let json = serde_json::to_string(&Level::Challenge).unwrap();
        assert_eq!(json, "\"challenge\"");
    }
}
