//! The fleet's proofs in Redis (`lua/proofs.lua`, whose header is the contract), under the
//! store's prefix and the hash tag `{proofs}`, so a Cluster keeps them in one slot: each change
//! is kept in a hash and appended to a stream; every instance reads the changes after the last
//! one it knows (every [`READ_EVERY`]), and the whole hash only at start or after falling too
//! far behind.

use super::book::{Change, Kept};
use crate::identity::Identity;
use crate::limiter::reply_text as text;
use crate::limiter::{LimiterError, RedisDriver};
use redis::Value;
use std::sync::Arc;
use std::time::Duration;

/// `lua/proofs.lua`.
pub const PROOFS_SCRIPT: &str = include_str!("../../lua/proofs.lua");

/// How often an instance reads the changes made elsewhere (a proof reaches every instance
/// within about this, well within a second).
pub const READ_EVERY: Duration = Duration::from_millis(250);

/// A change read from the fleet: a value's new state (`None`: forgotten) and its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Told {
    /// The value's digest.
    pub identity: Identity,
    /// The source it was read from (`header:x-api-key`).
    pub source: String,
    /// Its state and until when (Unix ms, Redis's clock); `None` when it was forgotten.
    pub state: Option<(Kept, u64)>,
}

/// What one read of the changes brought.
#[derive(Debug)]
pub enum Read {
    /// The changes after the known one; the last one's id.
    Delta(String, Vec<Told>),
    /// The known change is gone: read everything (from this id on).
    Whole(String),
}

/// The proofs' keys and the driver that reaches them.
pub struct Fleet {
    driver: Arc<RedisDriver>,
    keys: Vec<String>,
}

impl Fleet {
    /// The proofs kept under `driver`'s prefix.
    pub fn new(driver: Arc<RedisDriver>) -> Self {
        let prefix = format!("{}:{{proofs}}", driver.prefix());
        let keys = ["states", "expiry", "changes"]
            .iter()
            .map(|name| format!("{prefix}:{name}"))
            .collect();
        Self { driver, keys }
    }

    async fn run(&self, args: Vec<String>) -> Result<Value, LimiterError> {
        self.driver.eval(PROOFS_SCRIPT, &self.keys, &args).await
    }

    /// Tells the fleet of `change` to a value of `source`, made at `now_ms`.
    pub async fn tell(
        &self,
        change: &Change,
        source: &str,
        now_ms: u64,
    ) -> Result<(), LimiterError> {
        let state = match change.kept {
            Kept::Proven => "p",
            Kept::Revoked => "r",
        };
        let ttl = change.until_ms.saturating_sub(now_ms).max(1);
        let args = [
            "set",
            &change.identity.hex(),
            state,
            &ttl.to_string(),
            source,
        ];
        self.run(args.map(str::to_owned).to_vec()).await.map(drop)
    }

    /// Forgets a value of `source` fleet-wide: whether it was known.
    pub async fn forget(&self, identity: &Identity, source: &str) -> Result<bool, LimiterError> {
        let args = ["forget", &identity.hex(), source];
        match self.run(args.map(str::to_owned).to_vec()).await? {
            Value::Array(parts) => Ok(matches!(parts.first(), Some(Value::Int(1)))),
            other => Err(odd(&other)),
        }
    }

    /// The changes after `known` ("0" before the first read).
    pub async fn read(&self, known: &str) -> Result<Read, LimiterError> {
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

    /// Every value the fleet keeps (read a part at a time).
    pub async fn whole(&self) -> Result<Vec<Told>, LimiterError> {
        let values = self.driver.hash_values(&self.keys[0]).await?;
        Ok(values.iter().filter_map(|v| told(v)).collect())
    }

    /// What the fleet keeps of each of `identities`.
    pub async fn get(&self, identities: &[Identity]) -> Result<Vec<Told>, LimiterError> {
        let mut args = vec!["get".to_owned()];
        args.extend(identities.iter().map(Identity::hex));
        match self.run(args).await? {
            Value::Array(parts) => Ok(parts.iter().filter_map(|v| told(&text(v)?)).collect()),
            Value::Nil => Ok(Vec::new()),
            other => Err(odd(&other)),
        }
    }
}

/// An entry as the script keeps it: `<p|r|f> <until_ms> <digest> <source>`.
fn told(entry: &str) -> Option<Told> {
    let mut parts = entry.splitn(4, ' ');
    let (state, until, digest, source) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let until_ms: u64 = until.parse().ok()?;
    let state = match state {
        "p" => Some((Kept::Proven, until_ms)),
        "r" => Some((Kept::Revoked, until_ms)),
        "f" => None,
        _ => return None,
    };
    Some(Told {
        identity: Identity::from_hex(digest)?,
        source: source.to_owned(),
        state,
    })
}

fn odd(reply: &Value) -> LimiterError {
    LimiterError::Store(format!("proofs.lua answered {reply:?}"))
}

impl Told {
    /// The change it makes to a book.
    pub fn change(&self) -> Option<Change> {
        let (kept, until_ms) = self.state?;
        Some(Change {
            identity: self.identity,
            kept,
            until_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_back_as_written() {
        let id = Identity::from_hex("00112233445566778899aabbccddeeff").unwrap();
        let entry = format!("p 1700000000000 {} header:x-api-key", id.hex());
        let read = told(&entry).unwrap();
        assert_eq!(read.identity, id);
        assert_eq!(read.source, "header:x-api-key");
        assert_eq!(read.state, Some((Kept::Proven, 1_700_000_000_000)));
        let gone = told(&format!("f 0 {} cookie:session", id.hex())).unwrap();
        assert_eq!(gone.state, None);
        assert_eq!(told("x 1 2 3"), None);
        assert_eq!(told("p notanumber 00 s"), None);
    }
}
