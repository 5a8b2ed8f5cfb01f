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

/// A duration above zero written under key `K`: as [`Period`], and zero is refused with
/// "`K` must be above zero".
#[derive(Debug)]
pub(crate) struct PositivePeriod<K>(Period<K>);

impl<K> PositivePeriod<K> {
    /// The duration.
    pub(crate) fn get(&self) -> Duration {
        self.0.get()
    }
}

impl<'de, K: Key> Deserialize<'de> for PositivePeriod<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let period = Period::deserialize(deserializer)?;
        if period.get().is_zero() {
            return Err(D::Error::custom(format!(
                "`{}` must be above zero",
                K::NAME
            )));
        }
        Ok(Self(period))
    }
}
