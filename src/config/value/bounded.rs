//! An integer within bounds.

use super::Key;
use serde::{de::Error, Deserialize, Deserializer};
use std::marker::PhantomData;

/// An integer from `LO` to `HI` written under key `K`; out of bounds, the file is refused
/// with "`K` must be between LO and HI, not n".
#[derive(Debug)]
pub(crate) struct Bounded<K, const LO: i64, const HI: i64> {
    value: i64,
    key: PhantomData<K>,
}

impl<K, const LO: i64, const HI: i64> Bounded<K, LO, HI> {
    /// The value as a count (`LO` is never below 0 where this is used).
    pub(crate) fn count(&self) -> usize {
        usize::try_from(self.value).unwrap_or(0)
    }
}

impl<'de, K: Key, const LO: i64, const HI: i64> Deserialize<'de> for Bounded<K, LO, HI> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = i64::deserialize(deserializer)?;
        if !(LO..=HI).contains(&value) {
            let message = format!("`{}` must be between {LO} and {HI}, not {value}", K::NAME);
            return Err(D::Error::custom(message));
        }
        Ok(Self {
            value,
            key: PhantomData,
        })
    }
}
