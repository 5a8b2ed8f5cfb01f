//! The ACME state in the fleet's Redis (`lua/acme.lua`, whose header is the contract): the
//! lock one instance orders under, the certificates (keys sealed with the fleet's key), the
//! account (sealed too), and the validations under way, which any instance answers.

use super::error::{AcmeError, Step};
use super::kept::{Certificates, Kept, Lead, Written};
use super::seal::Sealer;
use crate::limiter::RedisDriver;
use redis::Value;
use std::sync::Arc;
use std::time::Duration;

/// `lua/acme.lua`.
pub const ACME_SCRIPT: &str = include_str!("../../lua/acme.lua");

/// How long the lock outlives its holder's last renewal.
/// Longer than one order may take (90 s to validate, 90 s to issue): the holder renews it
/// every tick and before each order.
pub(super) const LOCK_LEASE: Duration = Duration::from_secs(300);

/// A certificate as stored in Redis.
#[derive(serde::Serialize, serde::Deserialize)]
struct Stored {
    chain: String,
    /// The private key, sealed.
    key: String,
}

/// The state in Redis.
pub struct FleetVault {
    store: Arc<RedisDriver>,
    keys: Vec<String>,
    /// This instance's id in the lock.
    me: String,
    sealer: Sealer,
}

impl FleetVault {
    /// The state kept beside `store`'s buckets, `me` naming this instance, sealed with
    /// `sealing_key`.
    pub fn new(store: Arc<RedisDriver>, me: String, sealing_key: [u8; 32]) -> Self {
        let prefix = store.prefix();
        let keys = ["lock", "certs", "version", "accounts", "answers"]
            .iter()
            .map(|name| format!("{prefix}:{{acme}}:{name}"))
            .collect();
        Self {
            store,
            keys,
            me,
            sealer: Sealer::new(sealing_key),
        }
    }

    pub(super) async fn lead(&self) -> Result<Lead, AcmeError> {
        let lease = LOCK_LEASE.as_millis().to_string();
        match self.run(&["lead", &self.me, &lease]).await? {
            Value::Int(1 | 2) => Ok(Lead::Ordering),
            _ => Ok(Lead::Elsewhere),
        }
    }

    pub(super) async fn resign(&self) {
        if let Err(e) = self.run(&["resign", &self.me]).await {
            log::debug!("ACME: giving the lock up: {e}");
        }
    }

    pub(super) async fn account(&self, directory: &str) -> Result<Option<String>, AcmeError> {
        match self.run(&["account", directory]).await? {
            Value::BulkString(sealed) => match self.open(&String::from_utf8_lossy(&sealed)) {
                Ok(credentials) => Ok(Some(credentials)),
                // Sealed under another key (identity.hash_key changed): a new account is
                // made and kept in its place.
                Err(e) => {
                    log::warn!("ACME: the account kept for {directory} does not open ({e}); a new one is made");
                    Ok(None)
                }
            },
            _ => Ok(None),
        }
    }

    pub(super) async fn enrol(
        &self,
        directory: &str,
        credentials: &str,
    ) -> Result<Written, AcmeError> {
        let sealed = self.seal(credentials)?;
        written(self.run(&["enrol", &self.me, directory, &sealed]).await?)
    }

    pub(super) async fn certificates(&self, known: u64) -> Result<Certificates, AcmeError> {
        let reply = self.run(&["read", &known.to_string()]).await?;
        let Value::Array(items) = reply else {
            return Err(AcmeError::at(Step::Store, "acme.lua read: not a list"));
        };
        let mut items = items.into_iter();
        let version = match items.next() {
            Some(Value::Int(v)) => v.max(0) as u64,
            _ => return Err(AcmeError::at(Step::Store, "acme.lua read: no version")),
        };
        if version == known && items.len() == 0 {
            return Ok(Certificates::Unchanged);
        }
        let mut kept = Vec::new();
        while let (Some(domain), Some(json)) = (items.next(), items.next()) {
            let (domain, json) = (text(domain), text(json));
            match self.unseal_certificate(&json) {
                Ok(certificate) => kept.push((domain, certificate)),
                Err(e) => log::warn!("ACME: the certificate of `{domain}` in redis: {e}"),
            }
        }
        Ok(Certificates::All { version, kept })
    }

    pub(super) async fn put(&self, domain: &str, kept: &Kept) -> Result<Written, AcmeError> {
        let stored = Stored {
            chain: kept.chain.clone(),
            key: self.seal(&kept.key)?,
        };
        let json =
            serde_json::to_string(&stored).map_err(|e| AcmeError::failed(Step::Store, &e))?;
        written(self.run(&["put", &self.me, domain, &json]).await?)
    }

    /// Publishes `answer` to the validation of `name` for `ttl`.
    pub async fn answer(
        &self,
        name: &str,
        answer: &str,
        ttl: Duration,
    ) -> Result<Written, AcmeError> {
        let ttl = ttl.as_millis().to_string();
        written(self.run(&["answer", &self.me, name, answer, &ttl]).await?)
    }

    /// Withdraws the answer to the validation of `name`.
    pub async fn forget(&self, name: &str) {
        if let Err(e) = self.run(&["forget", &self.me, name]).await {
            log::debug!("ACME: withdrawing the answer for `{name}`: {e}");
        }
    }

    /// The answer to the validation of `name`, while it lives.
    pub async fn asked(&self, name: &str) -> Option<String> {
        match self.run(&["asked", name]).await {
            Ok(Value::BulkString(answer)) => String::from_utf8(answer).ok(),
            Ok(_) => None,
            Err(e) => {
                log::warn!("ACME: reading the answer for `{name}` from redis: {e}");
                None
            }
        }
    }

    fn unseal_certificate(&self, json: &str) -> Result<Kept, AcmeError> {
        let stored: Stored =
            serde_json::from_str(json).map_err(|e| AcmeError::failed(Step::Store, &e))?;
        Ok(Kept {
            chain: stored.chain,
            key: self.open(&stored.key)?,
        })
    }

    fn seal(&self, plain: &str) -> Result<String, AcmeError> {
        self.sealer
            .seal(plain.as_bytes())
            .map_err(|e| AcmeError::failed(Step::Store, &e))
    }

    fn open(&self, sealed: &str) -> Result<String, AcmeError> {
        let plain = self
            .sealer
            .open(sealed)
            .map_err(|e| AcmeError::failed(Step::Store, &e))?;
        String::from_utf8(plain).map_err(|e| AcmeError::failed(Step::Store, &e))
    }

    async fn run(&self, args: &[&str]) -> Result<Value, AcmeError> {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        self.store
            .eval(ACME_SCRIPT, &self.keys, &args)
            .await
            .map_err(|e| AcmeError::at(Step::Store, format!("redis: {e}")))
    }
}

fn written(reply: Value) -> Result<Written, AcmeError> {
    match reply {
        Value::Int(n) if n >= 0 => Ok(Written::Kept),
        Value::Int(_) => Ok(Written::LockLost),
        other => Err(AcmeError::at(Step::Store, format!("acme.lua: {other:?}"))),
    }
}

fn text(value: Value) -> String {
    match value {
        Value::BulkString(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Value::SimpleString(s) => s,
        other => format!("{other:?}"),
    }
}
