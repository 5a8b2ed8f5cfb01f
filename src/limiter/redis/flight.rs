//! One call per caller at a time, for callers Redis has just refused: when such a caller's
//! refusal lapses under a flood, the first request asks Redis and the others wait for its
//! answer (which, if it refuses again, the deny cache hands them) instead of each calling.
//!
//! Callers that are being allowed are not serialised: their concurrent calls are independent
//! and exact, and waiting in line would cap a caller at one decision per round trip.

use crate::identity::Identity;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::OwnedMutexGuard;

const SHARDS: usize = 16;
/// A shard holding this many lines sweeps out the ones nobody waits in.
const SWEEP_AT: usize = 1024;

type Line = Arc<tokio::sync::Mutex<()>>;

/// The callers with a call in flight, each with the line its other requests wait in.
pub(super) struct Flights {
    shards: Box<[Mutex<HashMap<Identity, Line>>]>,
}

/// A caller's turn to call; the next in line goes when it is dropped.
pub(super) struct Turn<'f> {
    flights: &'f Flights,
    identity: Identity,
    guard: Option<OwnedMutexGuard<()>>,
}

impl Flights {
    pub(super) fn new() -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }

    fn shard(&self, identity: &Identity) -> &Mutex<HashMap<Identity, Line>> {
        &self.shards[(identity.prefix_u64() >> 48) as usize % SHARDS]
    }

    /// Waits for `identity`'s turn.
    pub(super) async fn turn(&self, identity: Identity) -> Turn<'_> {
        let line = {
            let mut shard = self.shard(&identity).lock();
            if shard.len() >= SWEEP_AT {
                // Lines whose waiters all gave up (their budget spent) hold only the map's
                // reference; clones are made under this lock, so the count is exact.
                shard.retain(|_, line| Arc::strong_count(line) > 1);
            }
            shard.entry(identity).or_default().clone()
        };
        let guard = line.lock_owned().await;
        Turn {
            flights: self,
            identity,
            guard: Some(guard),
        }
    }

    /// How many callers have a line (for tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().len()).sum()
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let mut shard = self.flights.shard(&self.identity).lock();
        drop(self.guard.take());
        // The map's own reference is the last one: nobody waits, the line goes.
        if shard
            .get(&self.identity)
            .is_some_and(|line| Arc::strong_count(line) == 1)
        {
            shard.remove(&self.identity);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::IdentityKey;

    #[tokio::test]
    async fn one_turn_at_a_time_per_caller_and_lines_are_cleaned_up() {
        let flights = Arc::new(Flights::new());
        let alice = Identity::of(&IdentityKey::from_bytes([0; 32]), "t", b"alice");
        let first = flights.turn(alice).await;
        let waiting = {
            let flights = flights.clone();
            tokio::spawn(async move {
                let _turn = flights.turn(alice).await;
            })
        };
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert!(!waiting.is_finished(), "the second waits for the first");
        let bob = flights
            .turn(Identity::of(&IdentityKey::from_bytes([0; 32]), "t", b"bob"))
            .await;
        drop(bob);
        drop(first);
        waiting.await.unwrap();
        assert_eq!(flights.len(), 0);
    }
}
