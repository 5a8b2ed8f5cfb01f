//! Concurrency slots (`max_in_flight`): how many requests of one caller under one policy may
//! be under way at once. [`InFlight`] is the narrow interface; [`MemorySlots`] counts in this
//! process, the Redis store holds leases (`redis/slots.rs`). A [`Slot`] is released when
//! the request ends: by [`Slot::release`], or, failing that, when it is dropped. While it is
//! held, its owner keeps it (the Redis store renews its lease), so it lapses only when the
//! holder's process dies.

use crate::identity::Identity;
use crate::{BucketKey, LimiterError, PolicyKey};
use async_trait::async_trait;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

/// Where concurrency slots are counted.
#[async_trait]
pub trait InFlight: Send + Sync {
    /// Takes one of `limit` slots of `key`'s caller, or `None` when all are taken.
    async fn acquire(&self, key: BucketKey<'_>, limit: u32) -> Result<Option<Slot>, LimiterError>;

    /// How many slots of `key`'s caller are held now, across the fleet where slots are shared.
    async fn count(&self, key: BucketKey<'_>) -> Result<u32, LimiterError>;
}

/// Which slot: the caller, the policy, and a number unique among the holder's slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotId {
    /// The policy the slot counts under.
    pub policy: PolicyKey,
    /// The caller holding it.
    pub identity: Identity,
    /// Tells this slot from the caller's others.
    pub member: u64,
}

/// Whatever gives a slot back.
#[async_trait]
pub trait SlotOwner: Send + Sync {
    /// Gives `slot` back.
    async fn release(&self, slot: &SlotId);

    /// Gives `slot` up where nothing async can run (it was dropped outside a runtime): what
    /// can be done at once is done. An in-process count gives it back; a lease is no longer
    /// renewed, so it ends by itself.
    fn abandon(&self, slot: &SlotId);
}

/// A held slot. Dropping it gives it back too, in the background, so a request that ends in
/// any way (an error, a client gone) never keeps its slot.
pub struct Slot {
    owner: Option<Arc<dyn SlotOwner>>,
    id: SlotId,
}

impl Slot {
    /// The slot `id`, held until `owner` is told to release it.
    pub fn new(owner: Arc<dyn SlotOwner>, id: SlotId) -> Self {
        Self {
            owner: Some(owner),
            id,
        }
    }

    /// Gives the slot back now.
    pub async fn release(mut self) {
        if let Some(owner) = self.owner.take() {
            owner.release(&self.id).await;
        }
    }
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Slot").field(&self.id).finish()
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let Some(owner) = self.owner.take() else {
            return;
        };
        let id = self.id.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move { owner.release(&id).await });
            }
            Err(_) => {
                owner.abandon(&id);
                log::warn!("a concurrency slot was dropped outside a runtime; its lease returns it")
            }
        }
    }
}

const SHARDS: usize = 16;

type Counts = HashMap<(u64, Identity), u32>;

/// Slots counted in this process: one number per caller and policy, gone at zero.
#[derive(Clone)]
pub struct MemorySlots {
    counts: Arc<SlotCounts>,
}

struct SlotCounts {
    shards: Box<[Mutex<Counts>]>,
}

impl SlotCounts {
    fn shard(&self, policy: u64, identity: &Identity) -> &Mutex<Counts> {
        &self.shards[((identity.prefix_u64() ^ policy) >> 32) as usize % SHARDS]
    }
}

impl MemorySlots {
    /// No slot taken.
    pub fn new() -> Self {
        let shards = (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect();
        Self {
            counts: Arc::new(SlotCounts { shards }),
        }
    }

    /// Takes one of `limit` slots of `key` now, or `None`.
    pub fn try_acquire(&self, key: BucketKey<'_>, limit: u32) -> Option<Slot> {
        let policy = key.policy.id();
        let mut shard = self.counts.shard(policy, &key.identity).lock();
        let count = shard.entry((policy, key.identity)).or_insert(0);
        if *count >= limit {
            return None;
        }
        *count += 1;
        let id = SlotId {
            policy: key.policy.clone(),
            identity: key.identity,
            member: u64::from(*count),
        };
        Some(Slot::new(self.counts.clone(), id))
    }

    /// Slots held now by `key`'s caller.
    pub fn held(&self, key: BucketKey<'_>) -> u32 {
        let policy = key.policy.id();
        let shard = self.counts.shard(policy, &key.identity).lock();
        shard.get(&(policy, key.identity)).copied().unwrap_or(0)
    }
}

impl Default for MemorySlots {
    fn default() -> Self {
        Self::new()
    }
}

impl SlotCounts {
    /// Counts `slot` out, removing its caller's count at zero.
    fn give_back(&self, slot: &SlotId) {
        let policy = slot.policy.id();
        let mut shard = self.shard(policy, &slot.identity).lock();
        if let Some(count) = shard.get_mut(&(policy, slot.identity)) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                shard.remove(&(policy, slot.identity));
            }
        }
    }
}

#[async_trait]
impl SlotOwner for SlotCounts {
    async fn release(&self, slot: &SlotId) {
        self.give_back(slot);
    }

    fn abandon(&self, slot: &SlotId) {
        self.give_back(slot);
    }
}

#[async_trait]
impl InFlight for MemorySlots {
    async fn acquire(&self, key: BucketKey<'_>, limit: u32) -> Result<Option<Slot>, LimiterError> {
        Ok(self.try_acquire(key, limit))
    }

    async fn count(&self, key: BucketKey<'_>) -> Result<u32, LimiterError> {
        Ok(self.held(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The identity of caller `who`.
    fn caller(who: &str) -> Identity {
        Identity::of(
            &crate::IdentityKey::from_bytes([0; 32]),
            "t",
            who.as_bytes(),
        )
    }

    #[tokio::test]
    async fn a_caller_holds_at_most_the_limit_and_slots_come_back_however_they_end() {
        let slots = MemorySlots::new();
        let policy = PolicyKey::new("p");
        let key = BucketKey {
            policy: &policy,
            identity: caller("alice"),
        };
        let first = slots.try_acquire(key, 2).expect("one");
        let second = slots.try_acquire(key, 2).expect("two");
        assert!(slots.try_acquire(key, 2).is_none(), "the third waits");
        let bob = BucketKey {
            identity: caller("bob"),
            ..key
        };
        assert!(slots.try_acquire(bob, 2).is_some(), "callers apart");
        first.release().await;
        assert_eq!(slots.held(key), 1);
        drop(second);
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert_eq!(slots.held(key), 0, "a dropped slot is released too");
        assert!(slots.counts.shards.iter().all(|s| s.lock().is_empty()));
    }

    #[test]
    fn a_slot_dropped_outside_a_runtime_is_given_back_at_once() {
        let slots = MemorySlots::new();
        let policy = PolicyKey::new("p");
        let key = BucketKey {
            policy: &policy,
            identity: caller("carol"),
        };
        drop(slots.try_acquire(key, 1).expect("a slot"));
        assert_eq!(slots.held(key), 0);
    }
}
