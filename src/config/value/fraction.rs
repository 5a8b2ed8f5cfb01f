//! A fraction above 0 and at most 1.

use super::Key;
use serde::{de::Error, Deserialize, Deserializer};
use std::marker::PhantomData;

/// A number in (0, 1] written under key `K`; anything else is refused with "`K` must be above
/// 0 and at most 1, not x".
#[derive(Debug)]
pub(crate) struct Fraction<K> {
    value: f64,
    key: PhantomData<K>,
}

impl<K> Fraction<K> {
    /// The fraction.
    pub(crate) fn get(&self) -> f64 {
        self.value
    }
}

impl<'de, K: Key> Deserialize<'de> for Fraction<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = f64::deserialize(deserializer)?;
        if !(value > 0.0 && value <= 1.0) {
            let message = format!("`{}` must be above 0 and at most 1, not {value}", K::NAME);
            return Err(D::Error::custom(message));
        }
        Ok(Self {
            value,
            key: PhantomData,
        })
    }
}
