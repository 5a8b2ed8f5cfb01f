//! The Redis ledger: one control state for the fleet (`lua/control.lua`, whose header is the
//! contract), under the store's prefix and the hash tag `{control}`, so a Cluster keeps it in
//! one slot. Every change raises a version and is appended to a stream; instances read the
//! changes after the version they know, and the whole state (with HSCAN, a part at a time,
//! then the changes made meanwhile) only at start or after falling too far behind.

use super::change::{entry_of, Change};
use super::entry::{Contents, Entry, Kind};
use super::ledger::{Added, ControlError, Ledger, Read};
use crate::identity::Identity;
use crate::limiter::reply_text as text;
use crate::limiter::{LimiterError, RedisDriver};
use async_trait::async_trait;
use redis::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// `lua/control.lua`.
pub const CONTROL_SCRIPT: &str = include_str!("../../lua/control.lua");

/// The changes one read returns at most (`READ_CHANGES` in the script).
const READ_CHANGES: usize = 500;

/// How many times a whole read is tried before giving up until the next refresh (each try
/// fails only when more than the stream holds changed while the hashes were read).
const WHOLE_TRIES: usize = 3;

/// The control state in Redis.
pub struct RedisLedger {
    driver: Arc<RedisDriver>,
    prefix: String,
    keys: Vec<String>,
}

impl RedisLedger {
    /// The ledger kept under `driver`'s prefix, beside the buckets.
    pub fn new(driver: Arc<RedisDriver>) -> Self {
        let prefix = format!("{}:{{control}}", driver.prefix());
        let keys = [
            "bans",
            "overrides",
            "expiry",
            "override-index",
            "last-id",
            "version",
            "changes",
            "ban-index",
        ]
        .iter()
        .map(|name| format!("{prefix}:{name}"))
        .collect();
        Self {
            driver,
            prefix,
            keys,
        }
    }

    /// Runs the script with `args`, `key` naming the call's idempotency key.
    async fn run(&self, args: &[String], key: Option<&str>) -> Result<Vec<Value>, ControlError> {
        let mut keys = self.keys.clone();
        keys.push(format!("{}:idem:{}", self.prefix, key.unwrap_or("")));
        match self.driver.eval(CONTROL_SCRIPT, &keys, args).await {
            Ok(Value::Array(parts)) => Ok(parts),
            Ok(other) => Err(odd(&[other])),
            Err(e) => Err(failed(e)),
        }
    }

    /// The whole state: both hashes a part at a time, then the changes made meanwhile.
    async fn whole(&self, version: u64) -> Result<Read, ControlError> {
        let mut entries = BTreeMap::new();
        for hash in [&self.keys[0], &self.keys[1]] {
            let values = self.driver.hash_values(hash).await.map_err(failed)?;
            for entry in values.iter().filter_map(|json| readable(json)) {
                entries.insert(entry.id(), entry);
            }
        }
        let mut version = version;
        loop {
            match self.read_after(version).await? {
                Step::Latest => break,
                Step::Changes(next, changes) => {
                    for change in changes {
                        for id in change.gone {
                            entries.remove(&id);
                        }
                        for entry in change.added {
                            entries.insert(entry.id(), entry);
                        }
                    }
                    version = next;
                }
                Step::Gap(_) => return Ok(Read::Unchanged),
            }
        }
        Ok(Read::Whole {
            version,
            contents: Contents::of(entries.into_values()),
        })
    }

    /// One read after version `known`.
    async fn read_after(&self, known: u64) -> Result<Step, ControlError> {
        let args = ["read".to_owned(), known.to_string()];
        match self.run(&args, None).await?.as_slice() {
            [Value::Int(_), Value::Int(_)] => Ok(Step::Latest),
            [Value::Int(v), _, mode] if text(mode).as_deref() == Some("full") => {
                Ok(Step::Gap(*v as u64))
            }
            [Value::Int(v), _, _, changes @ ..] => {
                let changes: Option<Vec<Change>> = changes
                    .iter()
                    .map(|c| text(c).and_then(|json| Change::from_json(&json)))
                    .collect();
                match changes {
                    Some(changes) => Ok(Step::Changes(*v as u64, changes)),
                    None => {
                        log::warn!("a control change in Redis cannot be read; reading it whole");
                        Ok(Step::Gap(0))
                    }
                }
            }
            other => Err(odd(other)),
        }
    }
}

/// What one read after a known version found.
enum Step {
    /// The known version is the latest.
    Latest,
    /// The next changes and the version they lead to.
    Changes(u64, Vec<Change>),
    /// The stream no longer holds the change after the known one: the state at this version
    /// must be read whole.
    Gap(u64),
}

#[async_trait]
impl Ledger for RedisLedger {
    async fn add(
        &self,
        entry: Entry,
        ttl_ms: Option<u64>,
        max: usize,
        key: Option<&str>,
    ) -> Result<Added, ControlError> {
        let kind = entry.kind();
        let args = [
            "add".to_owned(),
            kind.word().to_owned(),
            max.to_string(),
            ttl_ms.unwrap_or(0).to_string(),
            entry.to_json(),
            if key.is_some() { "1" } else { "0" }.to_owned(),
        ];
        let reply = self.run(&args, key).await?;
        let kept = |json: &Value| text(json).and_then(|json| readable(&json));
        match reply.as_slice() {
            [outcome, Value::Int(0), _] if text(outcome).as_deref() == Some("full") => {
                Err(ControlError::Full { kind, max })
            }
            [outcome, Value::Int(id), _] if text(outcome).as_deref() == Some("replayed") => {
                Ok(Added::Replayed(*id as u64))
            }
            [outcome, _, _, json] => match (text(outcome).as_deref(), kept(json)) {
                (Some("created"), Some(entry)) => Ok(Added::Created(entry)),
                (Some("existing"), Some(entry)) => Ok(Added::Existing(entry)),
                _ => Err(odd(&reply)),
            },
            _ => Err(odd(&reply)),
        }
    }

    async fn remove(&self, kind: Kind, id: u64, key: Option<&str>) -> Result<bool, ControlError> {
        let keyed = if key.is_some() { "1" } else { "0" };
        let args = [
            "delete".to_owned(),
            kind.word().to_owned(),
            id.to_string(),
            keyed.to_owned(),
        ];
        match self.run(&args, key).await?.as_slice() {
            [Value::Int(removed), _] => Ok(*removed == 1),
            other => Err(odd(other)),
        }
    }

    async fn announce_reset(&self, caller: Identity) -> Result<(), ControlError> {
        self.run(&["reset".to_owned(), caller.hex()], None).await?;
        Ok(())
    }

    async fn made_under(&self, key: &str) -> Result<Option<u64>, ControlError> {
        match self
            .run(&["lookup".to_owned()], Some(key))
            .await?
            .as_slice()
        {
            [Value::Int(0), _] => Ok(None),
            [Value::Int(id), _] => Ok(Some(*id as u64)),
            other => Err(odd(other)),
        }
    }

    async fn read(&self, known: Option<u64>) -> Result<Read, ControlError> {
        self.read_from(known).await.map_err(ControlError::of_read)
    }
}

impl RedisLedger {
    /// What changed after `known` (the whole state without one).
    async fn read_from(&self, known: Option<u64>) -> Result<Read, ControlError> {
        let Some(known) = known else {
            return self.whole_from_scratch().await;
        };
        match self.read_after(known).await? {
            Step::Latest => Ok(Read::Unchanged),
            Step::Changes(version, changes) => {
                let more = changes.len() == READ_CHANGES;
                Ok(Read::Changes {
                    version,
                    changes,
                    more,
                })
            }
            Step::Gap(_) => self.whole_from_scratch().await,
        }
    }

    /// The whole state, from a version asked of the script first.
    async fn whole_from_scratch(&self) -> Result<Read, ControlError> {
        for _ in 0..WHOLE_TRIES {
            let version = match self.read_after(0).await? {
                Step::Latest => return Ok(empty(0)),
                Step::Gap(version) | Step::Changes(version, _) => version,
            };
            if version == 0 {
                return Ok(empty(0));
            }
            if let whole @ Read::Whole { .. } = self.whole(version).await? {
                return Ok(whole);
            }
        }
        Err(ControlError::Unavailable(
            "the control state changed faster than it could be read whole".into(),
        ))
    }
}

fn empty(version: u64) -> Read {
    Read::Whole {
        version,
        contents: Contents::default(),
    }
}

/// An entry stored as JSON; one that cannot be read is skipped and logged.
fn readable(json: &str) -> Option<Entry> {
    let entry = entry_of(json);
    if entry.is_none() {
        log::warn!("a control entry in Redis cannot be read; it is not applied");
    }
    entry
}

/// A store failure as a change's outcome: the breaker open or no connection to be had means
/// the script never ran; anything else may have come after Redis ran it.
fn failed(e: LimiterError) -> ControlError {
    match e {
        LimiterError::BreakerOpen | LimiterError::Unreachable(_) => {
            ControlError::Unavailable(e.to_string())
        }
        LimiterError::Timeout | LimiterError::Store(_) => ControlError::Unknown(e.to_string()),
    }
}

fn odd(reply: &[Value]) -> ControlError {
    ControlError::Unavailable(format!("control.lua answered {reply:?}"))
}
