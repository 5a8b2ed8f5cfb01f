//! One change of the control state, as a ledger records it and every instance applies it to
//! its view: entries added, entries gone (deleted, replaced or expired, by id: one sequence
//! numbers both lists) and callers whose buckets were reset.

use super::entry::{Ban, Entry, Override};
use crate::identity::Identity;
use serde::Deserialize;

/// What one version of the state changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Change {
    /// Entries added, as kept.
    pub added: Vec<Entry>,
    /// Entries gone, by id.
    pub gone: Vec<u64>,
    /// Callers whose buckets were reset (their cached refusals must be forgotten).
    pub resets: Vec<Identity>,
}

impl Change {
    /// A change that adds `entry`, and removes the entry it replaced, if any.
    pub fn added(entry: Entry, replaced: Option<u64>) -> Self {
        Self {
            added: vec![entry],
            gone: replaced.into_iter().collect(),
            resets: Vec::new(),
        }
    }

    /// A change that removes the entries `ids`.
    pub fn gone(ids: Vec<u64>) -> Self {
        Self {
            gone: ids,
            ..Self::default()
        }
    }

    /// A change that announces `caller`'s reset.
    pub fn reset(caller: Identity) -> Self {
        Self {
            resets: vec![caller],
            ..Self::default()
        }
    }

    /// The change `lua/control.lua` wrote as JSON (`{ a, g, r }`); `None` when it cannot be
    /// read (the reader then reads the whole state).
    pub fn from_json(json: &str) -> Option<Self> {
        let wire: Wire = serde_json::from_str(json).ok()?;
        let added = wire
            .added
            .iter()
            .map(|json| entry_of(json))
            .collect::<Option<Vec<_>>>()?;
        let resets = wire
            .resets
            .iter()
            .map(|hex| Identity::from_hex(hex))
            .collect::<Option<Vec<_>>>()?;
        Some(Self {
            added,
            gone: wire.gone,
            resets,
        })
    }
}

/// An entry stored as JSON: an override names its policy, a ban does not.
pub(super) fn entry_of(json: &str) -> Option<Entry> {
    let value: serde_json::Value = serde_json::from_str(json).ok()?;
    if value.get("policy").is_some() {
        serde_json::from_value::<Override>(value)
            .ok()
            .map(Entry::Override)
    } else {
        serde_json::from_value::<Ban>(value).ok().map(Entry::Ban)
    }
}

/// A change as `lua/control.lua` writes it. Lua's JSON encoder writes an empty list as `{}`,
/// so each list is left out when empty and read as empty when it is an object.
#[derive(Deserialize)]
struct Wire {
    #[serde(rename = "a", default, deserialize_with = "list")]
    added: Vec<String>,
    #[serde(rename = "g", default, deserialize_with = "list")]
    gone: Vec<u64>,
    #[serde(rename = "r", default, deserialize_with = "list")]
    resets: Vec<String>,
}

fn list<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    match serde_json::Value::deserialize(deserializer)? {
        serde_json::Value::Array(items) => items
            .into_iter()
            .map(|item| serde_json::from_value(item).map_err(serde::de::Error::custom))
            .collect(),
        _ => Ok(Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_written_by_the_script_reads_back_with_empty_lists_as_objects() {
        let ban = r#"{"scope":"cidr","value":"10.0.0.0/8","id":7,"created_at_ms":5}"#;
        let json = serde_json::json!({ "a": [ban], "g": {}, "r": [] }).to_string();
        let change = Change::from_json(&json).expect("readable");
        assert_eq!(change.added.len(), 1);
        assert_eq!(change.added[0].id(), 7);
        assert!(change.gone.is_empty() && change.resets.is_empty());
        assert_eq!(
            Change::from_json(r#"{"g":[3,4]}"#).unwrap().gone,
            vec![3, 4]
        );
        assert_eq!(Change::from_json(r#"{"a":["not json"]}"#), None);
    }
}
