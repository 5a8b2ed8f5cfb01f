//! A header name, and one Floodgate sets on the way to the backend (a request id, a
//! fingerprint, the score).

use super::Key;
use http::HeaderName;
use serde::{de::Error, Deserialize, Deserializer};
use std::marker::PhantomData;

/// Headers Floodgate sets no value of its own in (a request id, a fingerprint for the
/// backend): HTTP's own and the forwarding headers.
const RESERVED_HEADERS: [&str; 14] = [
    "host",
    "content-length",
    "content-type",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
    "via",
    "forwarded",
    "x-forwarded-for",
    "x-forwarded-proto",
    "x-forwarded-host",
];

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

impl<K: Key> Header<K> {
    /// `text` as a header name, else why not.
    fn read(text: &str) -> Result<Self, String> {
        match HeaderName::from_bytes(text.as_bytes()) {
            Ok(value) => Ok(Self {
                value,
                key: PhantomData,
            }),
            Err(_) => Err(format!("`{}` must be a header name, not `{text}`", K::NAME)),
        }
    }
}

impl<'de, K: Key> Deserialize<'de> for Header<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::read(&text).map_err(D::Error::custom)
    }
}

/// A header Floodgate sets on the way to the backend, written under key `K`: a [`Header`] of
/// no other use (not HTTP's own, a forwarding header or a RateLimit one); one of another use
/// is refused with "`K`: `text` has another use; name another header".
#[derive(Debug)]
pub(crate) struct BackendHeader<K>(Header<K>);

impl<K> BackendHeader<K> {
    /// The header name.
    pub(crate) fn get(&self) -> HeaderName {
        self.0.get()
    }
}

impl<'de, K: Key> Deserialize<'de> for BackendHeader<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let header = Header::<K>::read(&text).map_err(D::Error::custom)?;
        let name = header.value.as_str();
        if RESERVED_HEADERS.contains(&name) || name.starts_with("ratelimit") {
            let message = format!(
                "`{}`: `{text}` has another use; name another header",
                K::NAME
            );
            return Err(D::Error::custom(message));
        }
        Ok(Self(header))
    }
}
