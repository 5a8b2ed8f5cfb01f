//! What a directory lists (RFC 9578 §4):
//!
//! ```json
//! {"issuer-request-uri": "https://issuer.example/request",
//!  "token-keys": [{"token-type": 2, "token-key": "MIIB…", "not-before": 1686913811}]}
//! ```
//!
//! Keys of other token types are passed over, and so is a key that cannot be read (its error
//! kept for the log); a key whose `not-before` (Unix seconds) lies ahead is held back until
//! then. The issuer lists its preferred key first, and the order is kept.

use crate::privacy_pass::{IssuerKey, KeyError, TOKEN_TYPE};
use serde::Deserialize;

/// The most keys taken from one directory.
pub const MAX_KEYS: usize = 16;

/// The type 0x0002 keys of a directory, each with the second it is live from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Listed {
    keys: Vec<(IssuerKey, Option<u64>)>,
}

/// Why a directory gave no keys.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListedError {
    /// Not JSON, or no `token-keys` list.
    #[error("not an issuer directory: {0}")]
    NotDirectory(String),
    /// No key of type 2 in it.
    #[error("lists no key of token type 2")]
    NoKey,
    /// Its type 2 keys cannot be read.
    #[error("its token type 2 key cannot be read: {0}")]
    BadKey(KeyError),
}

#[derive(Deserialize)]
struct Document {
    #[serde(rename = "token-keys")]
    token_keys: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
struct Entry {
    #[serde(rename = "token-type")]
    token_type: u64,
    #[serde(rename = "token-key")]
    token_key: String,
    #[serde(rename = "not-before", default)]
    not_before: Option<f64>,
}

impl Listed {
    /// The keys of a directory's body.
    pub fn parse(body: &[u8]) -> Result<Self, ListedError> {
        let document: Document =
            serde_json::from_slice(body).map_err(|e| ListedError::NotDirectory(e.to_string()))?;
        let mut keys = Vec::new();
        let mut first_error = None;
        for entry in document.token_keys {
            let Ok(entry) = Entry::deserialize(entry) else {
                continue;
            };
            if entry.token_type != u64::from(TOKEN_TYPE) || keys.len() == MAX_KEYS {
                continue;
            }
            match IssuerKey::from_token_key(&entry.token_key) {
                Ok(key) => keys.push((key, entry.not_before.map(whole_seconds))),
                Err(e) => first_error = first_error.or(Some(e)),
            }
        }
        match (keys.is_empty(), first_error) {
            (false, _) => Ok(Self { keys }),
            (true, Some(e)) => Err(ListedError::BadKey(e)),
            (true, None) => Err(ListedError::NoKey),
        }
    }

    /// The keys live at `now_s` (Unix seconds), in the directory's order.
    pub fn live_at(&self, now_s: u64) -> Vec<IssuerKey> {
        self.keys
            .iter()
            .filter(|(_, from)| from.is_none_or(|from| from <= now_s))
            .map(|(key, _)| key.clone())
            .collect()
    }

    /// When the next held-back key turns live, after `now_s`.
    pub fn next_turn(&self, now_s: u64) -> Option<u64> {
        self.keys
            .iter()
            .filter_map(|(_, from)| *from)
            .filter(|from| *from > now_s)
            .min()
    }
}

/// A `not-before` as whole seconds (a negative one is the epoch: live).
fn whole_seconds(seconds: f64) -> u64 {
    seconds.max(0.0).ceil().min(u64::MAX as f64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::privacy_pass::test_issuer::{directory_json, TestIssuer};

    fn key(issuer: &TestIssuer) -> IssuerKey {
        IssuerKey::from_token_key(&issuer.token_key()).unwrap()
    }

    #[test]
    fn keys_are_listed_in_order_each_from_its_not_before() {
        let (a, b) = (TestIssuer::a(), TestIssuer::b());
        let body = directory_json(&[(&b, Some(2_000)), (&a, None)]);
        let listed = Listed::parse(body.as_bytes()).unwrap();
        assert_eq!(listed.live_at(1_999), [key(&a)]);
        assert_eq!(listed.live_at(2_000), [key(&b), key(&a)]);
        assert_eq!(listed.next_turn(1_000), Some(2_000));
        assert_eq!(listed.next_turn(2_000), None);
    }

    #[test]
    fn other_types_and_unreadable_entries_are_passed_over() {
        let a = TestIssuer::a();
        let body = format!(
            r#"{{"issuer-request-uri": "x", "token-keys": [
                {{"token-type": 1, "token-key": "AAAA"}},
                {{"token-type": 2, "token-key": "not a key"}},
                {{"token-type": "two"}},
                7,
                {{"token-type": 2, "token-key": "{}", "not-before": 1.5, "extra": true}}
            ], "more": {{}}}}"#,
            a.token_key()
        );
        let listed = Listed::parse(body.as_bytes()).unwrap();
        assert_eq!(listed.live_at(1), [] as [IssuerKey; 0]);
        assert_eq!(listed.live_at(2), [key(&a)]);
    }

    #[test]
    fn a_directory_without_a_usable_key_is_an_error() {
        for body in ["not json", "{}", r#"{"token-keys": 3}"#] {
            let error = Listed::parse(body.as_bytes());
            assert!(
                matches!(error, Err(ListedError::NotDirectory(_))),
                "{body}: {error:?}"
            );
        }
        let empty = Listed::parse(br#"{"token-keys": []}"#);
        assert_eq!(empty, Err(ListedError::NoKey));
        let unreadable = br#"{"token-keys": [{"token-type": 2, "token-key": "AAAA"}]}"#;
        let error = Listed::parse(unreadable);
        assert_eq!(error, Err(ListedError::BadKey(KeyError::NotSpki)));
    }

    #[test]
    fn at_most_16_keys_are_taken() {
        let a = TestIssuer::a();
        let many: Vec<_> = (0..40).map(|_| (&a, None)).collect();
        let listed = Listed::parse(directory_json(&many).as_bytes()).unwrap();
        assert_eq!(listed.live_at(0).len(), MAX_KEYS);
    }
}
