//! The trap's tables in Redis (`lua/traps.lua`, whose header is the contract), under the
//! store's prefix and the hash tag `{traps}`, so a Cluster keeps them in one slot: readers of
//! /robots.txt in a sorted set; bans in a hash, each change appended to a stream every
//! instance reads (every [`READ_EVERY`]), the whole hash only at start or after falling too
//! far behind; the fleet's trap path.

use super::bans::Held;
use super::error::TrapError;
use super::target::{Field, Wanted};
use crate::identity::Identity;
use crate::limiter::reply_text as text;
use crate::limiter::RedisDriver;
use redis::Value;
use std::sync::Arc;
use std::time::Duration;

/// `lua/traps.lua`.
pub const TRAPS_SCRIPT: &str = include_str!("../../../lua/traps.lua");

/// How often an instance reads the bans made elsewhere (a ban reaches every instance within
/// about this, well within a second).
pub const READ_EVERY: Duration = Duration::from_millis(250);

/// The most changes one read brings (`READ_CHANGES` in the script).
pub(super) const READ_CHANGES: usize = 500;

/// A change read from the fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Told {
    /// A ban made (or made again).
    Held(Field, Held),
    /// A ban pushed out by newer ones.
    Gone(Field),
}

/// What one read of the changes brought.
#[derive(Debug)]
pub(super) enum Read {
    /// The changes after the known one; the last one's id.
    Delta(String, Vec<Told>),
    /// The known change is gone: read everything (from this id on).
    Whole(String),
}

/// A ban the fleet holds, as the caller who made it learns it.
pub(super) struct Made {
    /// The field it is held under (its /48's when it was folded).
    pub(super) field: Field,
    /// Until when, and of what.
    pub(super) held: Held,
}

/// The trap's keys and the driver that reaches them.
pub(super) struct TrapFleet {
    driver: Arc<RedisDriver>,
    keys: Vec<String>,
}

impl TrapFleet {
    /// The tables kept under `driver`'s prefix.
    pub(super) fn new(driver: Arc<RedisDriver>) -> Self {
        let prefix = format!("{}:{{traps}}", driver.prefix());
        let names = [
            "bans", "order", "expiry", "v6", "changes", "readers", "path",
        ];
        let keys = names
            .iter()
            .map(|name| format!("{prefix}:{name}"))
            .collect();
        Self { driver, keys }
    }

    async fn run(&self, args: Vec<String>) -> Result<Value, TrapError> {
        Ok(self.driver.eval(TRAPS_SCRIPT, &self.keys, &args).await?)
    }

    /// Notes that `reader` fetched /robots.txt at `now_ms`; forgets reads before `cutoff_ms`
    /// and the oldest past `max`.
    pub(super) async fn reader(
        &self,
        reader: &Identity,
        now_ms: u64,
        cutoff_ms: u64,
        max: usize,
    ) -> Result<(), TrapError> {
        let args = ["reader", &reader.hex(), &now_ms.to_string()];
        let mut args: Vec<String> = args.map(str::to_owned).to_vec();
        args.extend([cutoff_ms.to_string(), max.to_string()]);
        self.run(args).await.map(drop)
    }

    /// Whether `reader` fetched /robots.txt at `since_ms` or later.
    pub(super) async fn has_read(
        &self,
        reader: &Identity,
        since_ms: u64,
    ) -> Result<bool, TrapError> {
        let args = ["has_read".to_owned(), reader.hex(), since_ms.to_string()];
        match self.run(args.to_vec()).await? {
            Value::Int(n) => Ok(n == 1),
            other => Err(odd(&other)),
        }
    }

    /// Bans `wanted` until `until_ms` (made at `now_ms`) by the folding rule, in a table of at
    /// most `max`, folding from `fold_at`: the ban as the fleet holds it.
    pub(super) async fn ban(
        &self,
        wanted: &Wanted,
        (until_ms, now_ms): (u64, u64),
        (max, fold_at): (usize, usize),
    ) -> Result<Made, TrapError> {
        let network = wanted.network.map(|n| n.text()).unwrap_or_default();
        let source = wanted.source.as_deref().unwrap_or_default().to_owned();
        let args = vec![
            "ban".to_owned(),
            wanted.field.text(),
            network,
            until_ms.to_string(),
            now_ms.to_string(),
            max.to_string(),
            fold_at.to_string(),
            source,
        ];
        let reply = self.run(args).await?;
        let entry = match &reply {
            Value::Array(parts) => parts.first().and_then(text),
            _ => None,
        };
        match entry.as_deref().and_then(told) {
            Some(Told::Held(field, held)) => Ok(Made { field, held }),
            _ => Err(odd(&reply)),
        }
    }

    /// The changes after `known` ("0" before the first read).
    pub(super) async fn read(&self, known: &str) -> Result<Read, TrapError> {
        let reply = self.run(vec!["read".into(), known.into()]).await?;
        let Value::Array(parts) = reply else {
            return Err(odd(&reply));
        };
        match (
            parts.first().and_then(text).as_deref(),
            parts.get(1).and_then(text),
        ) {
            (Some("full"), Some(last)) => Ok(Read::Whole(last)),
            (Some("delta"), Some(last)) => {
                let told = parts[2..].iter().filter_map(|v| told(&text(v)?)).collect();
                Ok(Read::Delta(last, told))
            }
            _ => Err(odd(&Value::Array(parts))),
        }
    }

    /// Every ban the fleet holds (read a part at a time).
    pub(super) async fn whole(&self) -> Result<Vec<(Field, Held)>, TrapError> {
        let values = self.driver.hash_values(&self.keys[0]).await?;
        let held = values.iter().filter_map(|v| match told(v)? {
            Told::Held(field, held) => Some((field, held)),
            Told::Gone(_) => None,
        });
        Ok(held.collect())
    }

    /// The fleet's trap path: `candidate` if none is kept yet.
    pub(super) async fn path(&self, candidate: &str) -> Result<String, TrapError> {
        let reply = self.run(vec!["path".into(), candidate.into()]).await?;
        text(&reply).ok_or_else(|| odd(&reply))
    }
}

/// An entry as the script keeps it: `<until_ms> <field> <0|1> [source]`, or `f 0 <field>`.
fn told(entry: &str) -> Option<Told> {
    let mut parts = entry.splitn(4, ' ');
    let (first, second, third) = (parts.next()?, parts.next()?, parts.next()?);
    if first == "f" {
        return Some(Told::Gone(Field::parse(third)?));
    }
    let held = Held {
        until_ms: first.parse().ok()?,
        v6: match third {
            "1" => true,
            "0" => false,
            _ => return None,
        },
        source: parts.next().map(Arc::from),
    };
    Some(Told::Held(Field::parse(second)?, held))
}

fn odd(reply: &Value) -> TrapError {
    TrapError::Answer(format!("{reply:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::robots::trap::target::TrapScope;

    #[test]
    fn entries_read_back_as_written() {
        let digest = Identity::from_hex("00112233445566778899aabbccddeeff").unwrap();
        let field = Field::new(TrapScope::Identity, digest);
        let entry = format!("1700000000000 {} 0 header:x-api-key", field.text());
        let Some(Told::Held(read, held)) = told(&entry) else {
            panic!("{entry}");
        };
        assert_eq!(read, field);
        assert_eq!(held.until_ms, 1_700_000_000_000);
        assert_eq!(held.source.as_deref(), Some("header:x-api-key"));
        let net = Field::new(TrapScope::Network48, digest);
        let Some(Told::Held(_, held)) = told(&format!("5 {} 1", net.text())) else {
            panic!("a /48");
        };
        assert!(held.v6 && held.source.is_none());
        assert_eq!(told(&format!("f 0 {}", net.text())), Some(Told::Gone(net)));
        assert_eq!(told("x 1 2"), None);
        assert_eq!(told(&format!("12 {} 2", net.text())), None);
        assert_eq!(told("12"), None);
    }
}
