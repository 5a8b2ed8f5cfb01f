//! A Redis URL, parsed only (the store connects when the server is built).

use super::Key;
use serde::{de::Error, Deserialize, Deserializer};
use std::marker::PhantomData;

/// A `redis://` or `rediss://` URL written under key `K`; anything else is refused with
/// "`K` must be a redis:// or rediss:// URL".
#[derive(Debug)]
pub(crate) struct RedisUrl<K> {
    value: String,
    key: PhantomData<K>,
}

impl<K> RedisUrl<K> {
    /// The URL as written.
    pub(crate) fn get(&self) -> String {
        self.value.clone()
    }
}

/// `text` if it is a Redis URL, else why not (naming `key`). For the elements of a list too,
/// which toml locates only by the whole list: those stay `Spanned` and are checked with this.
pub(crate) fn redis_url(text: &str, key: &str) -> Result<String, String> {
    use redis::IntoConnectionInfo;
    match text.into_connection_info() {
        Ok(_) => Ok(text.to_owned()),
        Err(_) => Err(format!("`{key}` must be a redis:// or rediss:// URL")),
    }
}

impl<'de, K: Key> Deserialize<'de> for RedisUrl<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let value = redis_url(&text, K::NAME).map_err(D::Error::custom)?;
        Ok(Self {
            value,
            key: PhantomData,
        })
    }
}
