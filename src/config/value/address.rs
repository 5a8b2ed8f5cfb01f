//! A socket address to listen on or connect to.

use super::Key;
use serde::{de::Error, Deserialize, Deserializer};
use std::marker::PhantomData;
use std::net::SocketAddr;

/// An address like `127.0.0.1:8080` written under key `K`; anything else is refused with
/// "`K` must be an address like 127.0.0.1:8080, not `text`".
#[derive(Debug)]
pub(crate) struct Address<K> {
    value: SocketAddr,
    key: PhantomData<K>,
}

impl<K> Address<K> {
    /// The address.
    pub(crate) fn get(&self) -> SocketAddr {
        self.value
    }
}

impl<'de, K: Key> Deserialize<'de> for Address<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let value = text.parse().map_err(|_| {
            let message = format!(
                "`{}` must be an address like 127.0.0.1:8080, not `{text}`",
                K::NAME
            );
            D::Error::custom(message)
        })?;
        Ok(Self {
            value,
            key: PhantomData,
        })
    }
}
