//! The Redis ledger: one control state for the fleet (`lua/control.lua`, whose header is the
//! contract), under the store's prefix and the hash tag `{control}`, so a Cluster keeps it in
//! one slot. Every change raises a version; instances read the whole state only when the
//! version moved.

use super::entry::{Ban, Contents, Entry, Kind, Override};
use super::ledger::{ControlError, Ledger, Read};
use crate::identity::Identity;
use crate::limiter::{LimiterError, RedisStore};
use async_trait::async_trait;
use redis::Value;
use std::sync::Arc;

/// `lua/control.lua`.
pub const CONTROL_SCRIPT: &str = include_str!("../../lua/control.lua");

/// The control state in Redis.
pub struct RedisLedger {
    store: Arc<RedisStore>,
    keys: Vec<String>,
}

impl RedisLedger {
    /// The ledger kept beside `store`'s buckets.
    pub fn new(store: Arc<RedisStore>) -> Self {
        let prefix = store.prefix();
        let keys = [
            "bans",
            "overrides",
            "expiry",
            "override-index",
            "last-id",
            "version",
            "resets",
        ]
        .iter()
        .map(|name| format!("{prefix}:{{control}}:{name}"))
        .collect();
        Self { store, keys }
    }

    async fn run(&self, args: &[String]) -> Result<Vec<Value>, ControlError> {
        let unavailable = |e: LimiterError| ControlError::Unavailable(e.to_string());
        match self.store.eval(CONTROL_SCRIPT, &self.keys, args).await {
            Ok(Value::Array(parts)) => Ok(parts),
            Ok(other) => Err(ControlError::Unavailable(format!(
                "control.lua answered {other:?}"
            ))),
            Err(e) => Err(unavailable(e)),
        }
    }
}

#[async_trait]
impl Ledger for RedisLedger {
    async fn add(
        &self,
        entry: Entry,
        ttl_ms: Option<u64>,
        max: usize,
    ) -> Result<Entry, ControlError> {
        let kind = entry.kind();
        let args = [
            "add".to_owned(),
            kind.word().to_owned(),
            max.to_string(),
            ttl_ms.unwrap_or(0).to_string(),
            entry.to_json(),
        ];
        match self.run(&args).await?.as_slice() {
            [Value::Int(0), _] => Err(ControlError::Full { kind, max }),
            [Value::Int(id), Value::Int(now)] => Ok(entry.stamped(*id as u64, *now as u64, ttl_ms)),
            other => Err(odd(other)),
        }
    }

    async fn remove(&self, kind: Kind, id: u64) -> Result<bool, ControlError> {
        let args = ["delete".to_owned(), kind.word().to_owned(), id.to_string()];
        match self.run(&args).await?.as_slice() {
            [Value::Int(removed), _] => Ok(*removed == 1),
            other => Err(odd(other)),
        }
    }

    async fn announce_reset(&self, caller: Identity) -> Result<(), ControlError> {
        self.run(&["reset".to_owned(), caller.hex()]).await?;
        Ok(())
    }

    async fn read(&self, known: Option<u64>) -> Result<Read, ControlError> {
        let known = known.map_or_else(|| "none".to_owned(), |v| v.to_string());
        match self.run(&["read".to_owned(), known]).await?.as_slice() {
            [Value::Int(_), Value::Int(_)] => Ok(Read::Unchanged),
            [Value::Int(version), _, Value::Array(bans), Value::Array(overrides), Value::Array(resets)] => {
                Ok(Read::Changed {
                    version: *version as u64,
                    contents: Contents {
                        bans: entries::<Ban>(bans),
                        overrides: entries::<Override>(overrides),
                    },
                    resets: resets
                        .iter()
                        .filter_map(text)
                        .filter_map(|hex| Identity::from_hex(&hex))
                        .collect(),
                })
            }
            other => Err(odd(other)),
        }
    }
}

/// The entries of a list of JSON strings; one that cannot be read is skipped and logged.
fn entries<T: serde::de::DeserializeOwned>(values: &[Value]) -> Vec<T> {
    values
        .iter()
        .filter_map(text)
        .filter_map(|json| match serde_json::from_str(&json) {
            Ok(entry) => Some(entry),
            Err(e) => {
                log::warn!("a control entry in Redis cannot be read ({e}); it is not applied");
                None
            }
        })
        .collect()
}

fn text(value: &Value) -> Option<String> {
    match value {
        Value::BulkString(bytes) => String::from_utf8(bytes.clone()).ok(),
        Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    }
}

fn odd(reply: &[Value]) -> ControlError {
    ControlError::Unavailable(format!("control.lua answered {reply:?}"))
}
