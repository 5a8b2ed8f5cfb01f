//! Lease renewal: one task per instance that, every third of a lease, gives every slot this
//! instance holds a fresh lease, in one script call per Cluster slot (one call on a single
//! Redis; at most [`MEMBERS_PER_CALL`] slots each). A slot is renewed two or three times before
//! its lease could end, so a late or failed renewal is made up by the next one; only an
//! instance that stops renewing (it died, or lost Redis for a whole lease) loses its slots.
//!
//! A renewal never brings back a slot that is gone (`inflight.lua` renews only slots still in
//! their set), so one racing its slot's release cannot revive it.

use super::SlotLeases;
use crate::driver::slot_of;
use crate::{LimiterError, SlotId};
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// The most slot ids one renewal call carries (bounds the script's time in Redis).
const MEMBERS_PER_CALL: usize = 1000;

const SHARDS: usize = 16;

/// The slots an instance holds now, by slot number; and whether their renewal task runs.
pub(super) struct LiveSlots {
    shards: Box<[Mutex<HashMap<u64, SlotId>>]>,
    renewing: AtomicBool,
}

impl LiveSlots {
    /// None held, none renewed.
    pub(super) fn new() -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            renewing: AtomicBool::new(false),
        }
    }

    fn shard(&self, member: u64) -> &Mutex<HashMap<u64, SlotId>> {
        &self.shards[member as usize % SHARDS]
    }

    /// Keeps `slot` until it is removed.
    pub(super) fn insert(&self, slot: &SlotId) {
        self.shard(slot.member)
            .lock()
            .insert(slot.member, slot.clone());
    }

    /// Stops keeping slot number `member`; whether it was kept.
    pub(super) fn remove(&self, member: u64) -> bool {
        self.shard(member).lock().remove(&member).is_some()
    }

    /// How many slots are held.
    pub(super) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().len()).sum()
    }

    fn snapshot(&self) -> Vec<SlotId> {
        self.shards
            .iter()
            .flat_map(|s| s.lock().values().cloned().collect::<Vec<_>>())
            .collect()
    }
}

/// Starts the renewal of `live`'s slots in the current runtime unless it runs already (it
/// ends with the last handle on `live`, or with its runtime, and then starts again here).
pub(super) fn keep_renewing(leases: &Arc<SlotLeases>, live: &Arc<LiveSlots>) {
    // A load first: the common case writes nothing every request would contend on.
    if live.renewing.load(Ordering::Acquire) || live.renewing.swap(true, Ordering::AcqRel) {
        return;
    }
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            runtime.spawn(renew_while_held(leases.clone(), Arc::downgrade(live)));
        }
        Err(_) => live.renewing.store(false, Ordering::Release),
    }
}

/// Clears `renewing` when the task ends, however it ends.
struct Renewing(Weak<LiveSlots>);

impl Drop for Renewing {
    fn drop(&mut self) {
        if let Some(live) = self.0.upgrade() {
            live.renewing.store(false, Ordering::Release);
        }
    }
}

/// Every third of a lease, renews the slots held then, until nothing holds `live`.
async fn renew_while_held(leases: Arc<SlotLeases>, live: Weak<LiveSlots>) {
    let _renewing = Renewing(live.clone());
    let period = Duration::from_millis((leases.lease_ms / 3).max(1));
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(slots) = live.upgrade().map(|l| l.snapshot()) else {
            return;
        };
        if slots.is_empty() {
            continue;
        }
        let gone = leases.renew(&slots).await;
        let Some(live) = live.upgrade() else {
            return;
        };
        // Those released meanwhile are gone by right; the others lapsed.
        let lapsed = gone.into_iter().filter(|&m| live.remove(m)).count();
        if lapsed > 0 {
            log::warn!(
                "{lapsed} concurrency slots lapsed before their renewal (Redis away for a \
                 lease?); their requests go on without them"
            );
        }
    }
}

/// A slot to renew: its id in Redis and its number here.
type Member = (String, u64);

/// One renewal call: the sets it touches, each with its slots to renew.
type Call = BTreeMap<String, Vec<Member>>;

impl SlotLeases {
    /// Renews `slots` in one call per Cluster slot (and per [`MEMBERS_PER_CALL`]), at once:
    /// the numbers of those that were gone.
    async fn renew(&self, slots: &[SlotId]) -> Vec<u64> {
        let calls = self.calls(slots);
        let answers = futures::future::join_all(calls.iter().map(|c| self.renew_call(c))).await;
        let mut gone = Vec::new();
        for (call, answer) in calls.iter().zip(answers) {
            match answer {
                Ok((_, ids)) => gone.extend(numbers_of(call, &ids)),
                Err(e) => log::debug!("a lease renewal failed ({e}); the next one makes up for it"),
            }
        }
        gone
    }

    /// `slots` as calls: grouped by Cluster slot (one group without a Cluster), then split.
    fn calls(&self, slots: &[SlotId]) -> Vec<Call> {
        let cluster = self.connection.is_cluster();
        let mut groups: BTreeMap<u16, Vec<(String, Member)>> = BTreeMap::new();
        for slot in slots {
            let hash_slot = match cluster {
                true => slot_of(slot.identity.hex().as_bytes()),
                false => 0,
            };
            let key = self.key(&slot.policy, &slot.identity);
            groups
                .entry(hash_slot)
                .or_default()
                .push((key, (self.member(slot), slot.member)));
        }
        let mut calls = Vec::new();
        for group in groups.into_values() {
            for chunk in group.chunks(MEMBERS_PER_CALL) {
                let mut call = Call::new();
                for (key, member) in chunk {
                    call.entry(key.clone()).or_default().push(member.clone());
                }
                calls.push(call);
            }
        }
        calls
    }

    /// One `renew` call: `{ renewed, { ids gone } }`.
    async fn renew_call(&self, call: &Call) -> Result<(i64, Vec<String>), LimiterError> {
        let keys: Vec<String> = call.keys().cloned().collect();
        let mut args = vec!["renew".to_owned(), self.lease_ms.to_string()];
        for members in call.values() {
            args.push(members.len().to_string());
            args.extend(members.iter().map(|(id, _)| id.clone()));
        }
        self.run(&keys, &args).await
    }
}

/// The numbers of the slots of `call` whose ids are in `ids`.
fn numbers_of<'a>(call: &'a Call, ids: &'a [String]) -> impl Iterator<Item = u64> + 'a {
    call.values()
        .flatten()
        .filter(|(id, _)| ids.contains(id))
        .map(|(_, number)| *number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PolicyKey;
    use crate::{Identity, IdentityKey};

    fn slot(who: &str, member: u64) -> SlotId {
        SlotId {
            policy: PolicyKey::new("p"),
            identity: Identity::of(&IdentityKey::from_bytes([0; 32]), "t", who.as_bytes()),
            member,
        }
    }

    #[test]
    fn live_slots_are_kept_until_removed() {
        let live = LiveSlots::new();
        for (i, who) in ["alice", "alice", "bob"].iter().enumerate() {
            live.insert(&slot(who, i as u64));
        }
        assert_eq!(live.len(), 3);
        assert!(live.remove(1));
        assert!(!live.remove(1), "removed once");
        let mut members: Vec<u64> = live.snapshot().iter().map(|s| s.member).collect();
        members.sort_unstable();
        assert_eq!(members, [0, 2]);
    }
}
