//! The fleet's decisions in Redis (`lua/crowdsec.lua`, whose header is the contract): one
//! instance at a time holds the lock and writes what it pulls; every instance reads the
//! changes (or, when it fell behind, the whole state) every quarter second.

use super::decision::Held;
use crate::limiter::reply_text as text;
use crate::limiter::{LimiterError, RedisDriver};
use redis::Value;
use std::sync::Arc;
use std::time::Duration;

/// `lua/crowdsec.lua`.
pub const CROWDSEC_SCRIPT: &str = include_str!("../../lua/crowdsec.lua");

/// Decisions per part of a whole state written aside: about 10 ms of Redis each.
const STAGED_PART: usize = 2_000;

/// Whether this instance pulls for the fleet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lead {
    /// It just took the lock: pull everything (`startup=true`) and replace the state.
    Taken,
    /// It held the lock already: pull what changed.
    Kept,
    /// Another instance holds it.
    Elsewhere,
}

/// What a read of the shared state found.
#[derive(Debug, PartialEq, Eq)]
pub enum Shared {
    /// Nothing changed since the known version.
    Unchanged {
        /// When LAPI was last pulled, Unix ms (0: never).
        pulled_ms: u64,
    },
    /// The changes since the known version, oldest first.
    Changes {
        /// The version they lead to.
        version: u64,
        /// When LAPI was last pulled, Unix ms.
        pulled_ms: u64,
        /// What each pull changed.
        changes: Vec<Change>,
    },
    /// The whole state, and the changes made while it was read (to apply after it).
    Whole {
        /// The version it leads to, with the changes.
        version: u64,
        /// When LAPI was last pulled, Unix ms (0: never).
        pulled_ms: u64,
        /// Every decision.
        decisions: Vec<Held>,
        /// Changes made while it was read, oldest first.
        changes: Vec<Change>,
    },
}

/// One pull's change.
#[derive(Debug, Default, PartialEq, Eq, serde::Deserialize)]
pub struct Change {
    /// Decisions deleted, by id.
    #[serde(rename = "d", default, deserialize_with = "ids")]
    pub deleted: Vec<u64>,
    /// Decisions added, as JSON.
    #[serde(rename = "n", default, deserialize_with = "helds")]
    pub new: Vec<Held>,
}

/// The decisions in Redis.
pub struct SharedDecisions {
    driver: Arc<RedisDriver>,
    keys: Vec<String>,
    /// This instance's id in the lock.
    me: String,
}

impl SharedDecisions {
    /// The decisions kept under `driver`'s prefix, `me` naming this instance in the lock.
    pub fn new(driver: Arc<RedisDriver>, me: String) -> Self {
        let prefix = driver.prefix();
        let keys = ["lock", "decisions", "version", "changes", "pulled", "next"]
            .iter()
            .map(|name| format!("{prefix}:{{crowdsec}}:{name}"))
            .collect();
        Self { driver, keys, me }
    }

    /// Takes or renews the lock for `lease`.
    pub async fn lead(&self, lease: Duration) -> Result<Lead, LimiterError> {
        let lease = lease.as_millis().to_string();
        match self.run(&["lead".into(), self.me.clone(), lease]).await? {
            Value::Int(2) => Ok(Lead::Taken),
            Value::Int(1) => Ok(Lead::Kept),
            _ => Ok(Lead::Elsewhere),
        }
    }

    /// Gives the lock up, so another instance takes over at once (on shutdown).
    pub async fn resign(&self) -> Result<(), LimiterError> {
        self.run(&["resign".into(), self.me.clone()])
            .await
            .map(drop)
    }

    /// Replaces the whole state with `decisions`, written aside in parts (so Redis is never
    /// held long) and then swapped in at once; false when the lock was lost.
    pub async fn replace(&self, decisions: &[Held]) -> Result<bool, LimiterError> {
        let parts = decisions.chunks(STAGED_PART);
        // An empty state is still staged: the first part clears what an earlier try left.
        let parts: Vec<&[Held]> = match decisions.is_empty() {
            true => vec![&[]],
            false => parts.collect(),
        };
        for (i, part) in parts.into_iter().enumerate() {
            let first = if i == 0 { "1" } else { "0" };
            let mut args = vec!["stage".into(), self.me.clone(), first.into()];
            args.extend(part.iter().map(to_json));
            if !self.written(self.run(&args).await?)? {
                return Ok(false);
            }
        }
        self.written(self.run(&["commit".into(), self.me.clone()]).await?)
    }

    /// Deletes `deleted` and adds `new`; false when the lock was lost.
    pub async fn apply(&self, deleted: &[u64], new: &[Held]) -> Result<bool, LimiterError> {
        let mut args = vec!["apply".into(), self.me.clone(), deleted.len().to_string()];
        args.extend(deleted.iter().map(u64::to_string));
        args.extend(new.iter().map(to_json));
        self.written(self.run(&args).await?)
    }

    /// What changed since version `known` (0: nothing known). A whole state is read in
    /// parts, then brought up to date with the changes made while it was read.
    pub async fn read(&self, known: u64) -> Result<Shared, LimiterError> {
        match self.read_once(known).await? {
            Shared::Whole {
                version, pulled_ms, ..
            } => {
                let values = self.driver.hash_values(&self.keys[1]).await?;
                let decisions = values.iter().filter_map(|json| parse(json)).collect();
                let (version, changes) = match self.read_once(version).await? {
                    Shared::Changes {
                        version, changes, ..
                    } => (version, changes),
                    // Replaced again meanwhile: the next read starts over.
                    Shared::Whole { .. } => return Ok(Shared::Unchanged { pulled_ms }),
                    Shared::Unchanged { .. } => (version, Vec::new()),
                };
                Ok(Shared::Whole {
                    version,
                    pulled_ms,
                    decisions,
                    changes,
                })
            }
            other => Ok(other),
        }
    }

    async fn read_once(&self, known: u64) -> Result<Shared, LimiterError> {
        let reply = self.run(&["read".into(), known.to_string()]).await?;
        let Value::Array(parts) = reply else {
            return Err(odd(&reply));
        };
        let number = |i: usize| match parts.get(i) {
            Some(Value::Int(n)) => Some(*n as u64),
            _ => None,
        };
        let (Some(version), Some(pulled_ms)) = (number(0), number(1)) else {
            return Err(odd(&Value::Array(parts)));
        };
        let texts = || parts.iter().skip(3).filter_map(text);
        Ok(match parts.get(2).and_then(text).as_deref() {
            None => Shared::Unchanged { pulled_ms },
            Some("delta") => Shared::Changes {
                version,
                pulled_ms,
                changes: texts().filter_map(|json| parse(&json)).collect(),
            },
            Some(_) => Shared::Whole {
                version,
                pulled_ms,
                decisions: Vec::new(),
                changes: Vec::new(),
            },
        })
    }

    fn written(&self, reply: Value) -> Result<bool, LimiterError> {
        match reply {
            Value::Int(v) => Ok(v >= 0),
            other => Err(odd(&other)),
        }
    }

    async fn run(&self, args: &[String]) -> Result<Value, LimiterError> {
        self.driver.eval(CROWDSEC_SCRIPT, &self.keys, args).await
    }
}

fn to_json(held: &Held) -> String {
    serde_json::to_string(held).unwrap_or_default()
}

/// A value read back from Redis; one that cannot be read is skipped and logged.
fn parse<T: serde::de::DeserializeOwned>(json: &str) -> Option<T> {
    serde_json::from_str(json)
        .map_err(|e| log::warn!("a CrowdSec decision in Redis cannot be read ({e}); skipped"))
        .ok()
}

fn odd(reply: &Value) -> LimiterError {
    LimiterError::Store(format!("crowdsec.lua answered {reply:?}"))
}

/// Deleted ids, written by the script as strings (an empty Lua table is encoded as `{}`).
fn ids<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
    Ok(strings(d)?.filter_map(|t| t.parse().ok()).collect())
}

fn strings<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<impl Iterator<Item = String>, D::Error> {
    use serde::Deserialize;
    let items = match serde_json::Value::deserialize(d)? {
        serde_json::Value::Array(items) => items,
        _ => Vec::new(),
    };
    Ok(items
        .into_iter()
        .filter_map(|item| item.as_str().map(str::to_owned)))
}

/// New decisions, written by the script as JSON strings inside the change's JSON.
fn helds<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Held>, D::Error> {
    Ok(strings(d)?.filter_map(|json| parse(&json)).collect())
}
