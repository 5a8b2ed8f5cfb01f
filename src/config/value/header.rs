//! A header name.

use super::Key;
use http::HeaderName;
use serde::{de::Error, Deserialize, Deserializer};
use std::marker::PhantomData;

/// A header name (`x-ja4`, read in lower case) written under key `K`; anything else is refused
/// with "`K` must be a header name, not `text`".
#[derive(Debug)]
pub(crate) struct Header<K> {
    value: HeaderName,
    key: PhantomData<K>,
}

impl<K> Header<K> {
    /// The header name.
    pub(crate) fn get(&self) -> HeaderName {
        self.value.clone()
    }
}

impl<'de, K: Key> Deserialize<'de> for Header<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let value = HeaderName::from_bytes(text.as_bytes()).map_err(|_| {
            let message = format!("`{}` must be a header name, not `{text}`", K::NAME);
            D::Error::custom(message)
        })?;
        Ok(Self {
            value,
            key: PhantomData,
        })
    }
}
