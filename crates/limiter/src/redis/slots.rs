//! Concurrency slots in Redis (`lua/inflight.lua`, its header is the contract): one sorted set
//! of leases per caller and policy, `prefix:{identity}:policy:in-flight`. A slot is a lease
//! of `store.in_flight_lease` on Redis's clock, renewed while its request runs (`renewal`), so
//! a request keeps its slot however long it lasts, an instance that dies gives its slots back
//! when their leases end, and a live request gives its slot back when it ends.

mod renewal;

use crate::driver::{Connection, RedisDriver, Script, INFLIGHT_SCRIPT};
use crate::identity::Identity;
use crate::{BucketKey, InFlight, LimiterError, PolicyKey, Slot, SlotId, SlotOwner};
use async_trait::async_trait;
use redis::FromRedisValue;
use renewal::LiveSlots;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// This instance's slots in Redis. Its clones are one instance: dropping the last one stops
/// the renewals, as the death of the process would.
#[derive(Clone)]
pub struct RedisSlots {
    leases: Arc<SlotLeases>,
    live: Arc<LiveSlots>,
}

struct SlotLeases {
    connection: Arc<Connection>,
    script: Script,
    prefix: String,
    timeout: Duration,
    lease_ms: u64,
    /// Tells this instance's slot ids from every other instance's.
    instance: u64,
    next: AtomicU64,
    /// The slots this instance holds now, which the renewal keeps.
    live: Weak<LiveSlots>,
}

impl RedisSlots {
    /// The concurrency slots kept on `driver`'s Redis beside the buckets, as one instance, each
    /// a lease of `lease` (`store.in_flight_lease`).
    pub fn new(driver: &RedisDriver, lease: Duration) -> Self {
        let salt = std::collections::hash_map::RandomState::new();
        let live = Arc::new(LiveSlots::new());
        let leases = Arc::new(SlotLeases {
            connection: driver.connection().clone(),
            script: Script::new(INFLIGHT_SCRIPT),
            prefix: driver.prefix().to_owned(),
            timeout: driver.timeout(),
            lease_ms: lease.as_millis().max(1) as u64,
            instance: salt.hash_one(std::process::id()),
            next: AtomicU64::new(0),
            live: Arc::downgrade(&live),
        });
        RedisSlots { leases, live }
    }

    /// The key of a caller's slots under a policy.
    pub fn key(&self, policy: &PolicyKey, identity: &Identity) -> String {
        self.leases.key(policy, identity)
    }

    /// How many slots this instance holds (and renews) now.
    pub fn held(&self) -> usize {
        self.live.len()
    }
}

impl SlotLeases {
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

    /// Runs the script on `keys` with `args`, within the budget; its answer.
    async fn run<T: FromRedisValue>(
        &self,
        keys: &[String],
        args: &[String],
    ) -> Result<T, LimiterError> {
        let evalsha = self.script.evalsha(keys, args);
        let call = async {
            let mut conn = self.connection.get().await?;
            self.script
                .run_on::<T>(&evalsha, &mut conn)
                .await
                .map_err(|e| LimiterError::Store(e.to_string()))
        };
        match tokio::time::timeout(self.timeout, call).await {
            Ok(answer) => answer,
            Err(_) => Err(LimiterError::Timeout),
        }
    }

    /// Runs the script's `op` on `slot`'s set, for `slot`, with `more` arguments: its
    /// `{ ok, held }` answer.
    async fn run_for(
        &self,
        op: &str,
        slot: &SlotId,
        more: &[String],
    ) -> Result<(i64, i64), LimiterError> {
        let key = self.key(&slot.policy, &slot.identity);
        let mut args = vec![op.to_owned(), self.member(slot)];
        args.extend_from_slice(more);
        self.run(std::slice::from_ref(&key), &args).await
    }

    /// Stops renewing `slot`.
    fn forget(&self, slot: &SlotId) {
        if let Some(live) = self.live.upgrade() {
            live.remove(slot.member);
        }
    }
}

#[async_trait]
impl SlotOwner for SlotLeases {
    async fn release(&self, slot: &SlotId) {
        // Not renewed from now on, so a failed release still ends with the lease.
        self.forget(slot);
        if let Err(e) = self.run_for("release", slot, &[]).await {
            log::debug!("a concurrency slot was not released ({e}); its lease returns it");
        }
    }

    fn abandon(&self, slot: &SlotId) {
        self.forget(slot);
    }
}

#[async_trait]
impl InFlight for RedisSlots {
    async fn acquire(&self, key: BucketKey<'_>, limit: u32) -> Result<Option<Slot>, LimiterError> {
        renewal::keep_renewing(&self.leases, &self.live);
        let id = SlotId {
            policy: key.policy.clone(),
            identity: key.identity,
            member: self.leases.next.fetch_add(1, Ordering::Relaxed),
        };
        let terms = [limit.to_string(), self.leases.lease_ms.to_string()];
        let (taken, _) = self.leases.run_for("acquire", &id, &terms).await?;
        if taken != 1 {
            return Ok(None);
        }
        self.live.insert(&id);
        Ok(Some(Slot::new(self.leases.clone(), id)))
    }

    async fn count(&self, key: BucketKey<'_>) -> Result<u32, LimiterError> {
        let name = self.leases.key(key.policy, &key.identity);
        let (_, held): (i64, i64) = self
            .leases
            .run(std::slice::from_ref(&name), &["count".to_owned()])
            .await?;
        Ok(u32::try_from(held).unwrap_or(0))
    }
}
