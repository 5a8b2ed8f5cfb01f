//! Concurrency slots in Redis (`lua/inflight.lua`, its header is the contract): one sorted set
//! of leases per caller and policy, `prefix:{identity}:policy:in-flight`. A slot is a lease
//! of `store.in_flight_lease` on Redis's clock, so an instance that dies gives its slots back
//! when their leases end; a live request gives its slot back when it ends.

use super::connection::Connection;
use super::script::{Script, INFLIGHT_SCRIPT};
use super::RedisStore;
use crate::identity::Identity;
use crate::limiter::{BucketKey, InFlight, LimiterError, PolicyKey, Slot, SlotId, SlotOwner};
use async_trait::async_trait;
use redis::{ErrorKind, ServerErrorKind};
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// This instance's slots in Redis.
#[derive(Clone)]
pub struct RedisSlots {
    leases: Arc<Leases>,
}

struct Leases {
    connection: Arc<Connection>,
    script: Script,
    prefix: String,
    timeout: Duration,
    lease_ms: u64,
    /// Tells this instance's slot ids from every other instance's.
    instance: u64,
    next: AtomicU64,
}

impl RedisStore {
    /// The concurrency slots kept beside this store's buckets.
    pub fn slots(&self) -> RedisSlots {
        let salt = std::collections::hash_map::RandomState::new();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        RedisSlots {
            leases: Arc::new(Leases {
                connection: self.connection.clone(),
                script: Script::new(INFLIGHT_SCRIPT),
                prefix: self.prefix.clone(),
                timeout: self.timeout,
                lease_ms: self.in_flight_lease.as_millis().max(1) as u64,
                instance: salt.hash_one((std::process::id(), now)),
                next: AtomicU64::new(0),
            }),
        }
    }
}

impl RedisSlots {
    /// The key of a caller's slots under a policy.
    pub fn key(&self, policy: &PolicyKey, identity: &Identity) -> String {
        self.leases.key(policy, identity)
    }
}

impl Leases {
    fn key(&self, policy: &PolicyKey, identity: &Identity) -> String {
        format!(
            "{}:{{{}}}:{}:in-flight",
            self.prefix,
            identity.hex(),
            policy.name()
        )
    }

    fn member(&self, slot: &SlotId) -> String {
        format!("{:016x}-{}", self.instance, slot.member)
    }

    /// Runs the script with `args` after the key and slot id, within the budget; its
    /// `{ ok, held }` answer.
    async fn run(&self, slot: &SlotId, args: &[&str]) -> Result<(bool, u64), LimiterError> {
        let mut evalsha = redis::cmd("EVALSHA");
        evalsha
            .arg(self.script.hash())
            .arg(1)
            .arg(self.key(&slot.policy, &slot.identity))
            .arg(args[0])
            .arg(self.member(slot))
            .arg(&args[1..]);
        let call = async {
            let mut conn = self.connection.get().await?;
            let store_error = |e: redis::RedisError| LimiterError::Store(e.to_string());
            match evalsha.query_async::<(i64, i64)>(&mut conn).await {
                Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                    let load = self.script.load_command();
                    load.query_async::<String>(&mut conn)
                        .await
                        .map_err(store_error)?;
                    evalsha.query_async(&mut conn).await.map_err(store_error)
                }
                reply => reply.map_err(store_error),
            }
        };
        match tokio::time::timeout(self.timeout, call).await {
            Ok(Ok((ok, held))) => Ok((ok == 1, u64::try_from(held).unwrap_or(0))),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(LimiterError::Timeout),
        }
    }
}

#[async_trait]
impl SlotOwner for Leases {
    async fn release(&self, slot: &SlotId) {
        if let Err(e) = self.run(slot, &["release"]).await {
            log::debug!("a concurrency slot was not released ({e}); its lease returns it");
        }
    }
}

#[async_trait]
impl InFlight for RedisSlots {
    async fn acquire(&self, key: BucketKey<'_>, limit: u32) -> Result<Option<Slot>, LimiterError> {
        let id = SlotId {
            policy: key.policy.clone(),
            identity: key.identity,
            member: self.leases.next.fetch_add(1, Ordering::Relaxed),
        };
        let (limit, lease) = (limit.to_string(), self.leases.lease_ms.to_string());
        let (taken, _) = self.leases.run(&id, &["acquire", &limit, &lease]).await?;
        Ok(taken.then(|| Slot::new(self.leases.clone(), id)))
    }
}
