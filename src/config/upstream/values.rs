//! `[upstream]`'s typed values of its own (a probed path, a host name, a pool's name): each
//! checks itself while the file is parsed, so toml locates its error where it stands.

use crate::config::value::Key;
use crate::proxy::DEFAULT_POOL;
use serde::{de::Error, Deserialize, Deserializer};
use std::marker::PhantomData;

/// The path a health check probes, written under key `K`: absolute, with a query if wanted;
/// anything else is refused with "`K` must be a path like /healthz, not `text`".
#[derive(Debug)]
pub(crate) struct ProbePath<K> {
    value: String,
    key: PhantomData<K>,
}

impl<K> ProbePath<K> {
    /// The path as written.
    pub(crate) fn get(&self) -> &str {
        &self.value
    }
}

impl<'de, K: Key> Deserialize<'de> for ProbePath<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        if !text.starts_with('/') || text.parse::<http::uri::PathAndQuery>().is_err() {
            let message = format!("`{}` must be a path like /healthz, not `{text}`", K::NAME);
            return Err(D::Error::custom(message));
        }
        Ok(Self {
            value: text,
            key: PhantomData,
        })
    }
}

/// A pool's `host`, written under key `K`: a name (or `name:port`) for the `Host` header and
/// the TLS name; anything else is refused with "`K` must be a host name like api.internal
/// (or name:port), not `text`".
#[derive(Debug)]
pub(crate) struct HostName<K> {
    value: String,
    key: PhantomData<K>,
}

impl<K> HostName<K> {
    /// The host as written.
    pub(crate) fn get(&self) -> String {
        self.value.clone()
    }
}

impl<'de, K: Key> Deserialize<'de> for HostName<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let valid = !text.is_empty()
            && text.bytes().all(|b| b.is_ascii_graphic())
            && !text.contains(['/', '@', '?', '#']);
        if !valid {
            let message = format!(
                "`{}` must be a host name like api.internal (or name:port), not `{text}`",
                K::NAME
            );
            return Err(D::Error::custom(message));
        }
        Ok(Self {
            value: text,
            key: PhantomData,
        })
    }
}

/// The name of an `[upstream.pools.NAME]` table: 1 to 64 letters, digits, `-`, `_` or `.`,
/// and not `default` (the pool of `upstream.backends`); anything else is refused with a
/// message naming `upstream.pools`.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct PoolName(String);

impl PoolName {
    /// The name.
    pub(crate) fn get(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for PoolName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let valid = !text.is_empty()
            && text.len() <= 64
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
        if text == DEFAULT_POOL {
            return Err(D::Error::custom(format!(
                "`upstream.pools`: `{DEFAULT_POOL}` is the pool of `upstream.backends`; give this \
                 pool another name"
            )));
        }
        if !valid {
            return Err(D::Error::custom(format!(
                "`upstream.pools`: a pool name is 1 to 64 letters, digits, `-`, `_` or `.`, not \
                 `{text}`"
            )));
        }
        Ok(Self(text))
    }
}
