//! `[bots.score]`'s typed values: a signal's name and its weight, each checked while the file
//! is parsed, so toml locates its error where it stands.

use crate::identity::{Signal, MAX_SCORE};
use serde::{de::Error, Deserialize, Deserializer};

/// A key of `bots.score.weights`: a signal's name (`headless`); anything else is refused with
/// "`bots.score.weights`: `robot` is not a signal".
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct SignalName(pub(crate) Signal);

impl<'de> Deserialize<'de> for SignalName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse()
            .map(Self)
            .map_err(|e| D::Error::custom(format!("`bots.score.weights`: {e}")))
    }
}

/// A value of `bots.score.weights`: 0 (the signal off) to 100; anything else is refused with
/// "`bots.score.weights`: a weight must be from 0 to 100, not n".
#[derive(Debug)]
pub(crate) struct Weight(pub(crate) u8);

impl<'de> Deserialize<'de> for Weight {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = i64::deserialize(deserializer)?;
        match u8::try_from(value) {
            Ok(n) if n <= MAX_SCORE => Ok(Self(n)),
            _ => Err(D::Error::custom(format!(
                "`bots.score.weights`: a weight must be from 0 to {MAX_SCORE}, not {value}"
            ))),
        }
    }
}
