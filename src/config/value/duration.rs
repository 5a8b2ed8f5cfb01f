//! A duration written like `500ms` or `30s`.

use super::Key;
use serde::{de::Error, Deserialize, Deserializer};
use std::marker::PhantomData;
use std::time::Duration;

/// A duration written under key `K` (`humantime`'s form); anything else is refused with
/// "`K` must be a duration like 500ms or 30s: why".
#[derive(Debug)]
pub(crate) struct Period<K> {
    value: Duration,
    key: PhantomData<K>,
}

impl<K> Period<K> {
    /// The duration.
    pub(crate) fn get(&self) -> Duration {
        self.value
    }
}

impl<'de, K: Key> Deserialize<'de> for Period<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let value = humantime::parse_duration(&text).map_err(|e| {
            let message = format!("`{}` must be a duration like 500ms or 30s: {e}", K::NAME);
            D::Error::custom(message)
        })?;
        Ok(Self {
            value,
            key: PhantomData,
        })
    }
}
