//! One call per caller at a time, for callers Redis has just refused: when such a caller's
//! refusal lapses under a flood, the first request (the leader) asks Redis and the others
//! (followers) wait for that call to land instead of each calling.
//!
//! A follower's wait is part of its budget: it waits no longer than one budget from when its
//! request arrived, whatever the leader's call does. When the call lands, what the follower
//! gets depends on what Redis said (`RedisStore::acquire` applies this):
//! - a refusal: the deny cache holds it, and the follower is refused from it. This is exact:
//!   nothing but Redis adds tokens, so a bucket that could not pay before T still cannot for
//!   any later request before T. The one exception is a refund settled by another instance
//!   (`count_status`, `settle_header`, a lapsed lease given back), which this instance does
//!   not see; the refusal may then be stricter than Redis by that refund, never looser.
//! - an allowance (or no answer in time): the follower asks Redis itself, with what is left of
//!   its budget, concurrently with the other followers. Callers being allowed are not
//!   serialised: their concurrent calls are independent and exact, and a line would cap a
//!   caller at one decision per round trip.
//!
//! Only a follower whose budget runs out (the leader's call was slow) is decided by `on_error`,
//! exactly as a request that called Redis itself and missed its budget would be.

use crate::identity::Identity;
use parking_lot::Mutex;
use std::collections::HashMap;
use tokio::sync::watch;
use tokio::time::Instant;

const SHARDS: usize = 16;

/// Callers with a call in the air, and the signal of each one's landing.
type Shard = Mutex<HashMap<Identity, watch::Receiver<()>>>;

/// The callers with a call in the air, each with the signal of its landing.
pub(super) struct Turns {
    shards: Box<[Shard]>,
}

/// Where a request stands among its caller's requests.
pub(super) enum Place<'f> {
    /// It calls; the followers are released when this is dropped.
    Lead(Lead<'f>),
    /// Another request is calling: wait for it to land.
    Follow(Landing),
}

/// The leader's call in the air; dropping it lands the call.
pub(super) struct Lead<'f> {
    turns: &'f Turns,
    identity: Identity,
    landed: Option<watch::Sender<()>>,
}

/// What a follower waits on.
pub(super) struct Landing(watch::Receiver<()>);

/// The follower's budget ran out before the leader's call landed.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct OutOfBudget;

impl Turns {
    pub(super) fn new() -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }

    fn shard(&self, identity: &Identity) -> &Shard {
        &self.shards[(identity.prefix_u64() >> 48) as usize % SHARDS]
    }

    /// Leads `identity`'s call, or follows the one in the air.
    pub(super) fn join(&self, identity: Identity) -> Place<'_> {
        let mut shard = self.shard(&identity).lock();
        if let Some(landing) = shard.get(&identity) {
            return Place::Follow(Landing(landing.clone()));
        }
        let (landed, landing) = watch::channel(());
        shard.insert(identity, landing);
        Place::Lead(Lead {
            turns: self,
            identity,
            landed: Some(landed),
        })
    }

    /// How many callers have a call in the air (for tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().len()).sum()
    }
}

impl Landing {
    /// Waits until the leader's call landed, at the latest until `deadline`.
    pub(super) async fn by(mut self, deadline: Instant) -> Result<(), OutOfBudget> {
        // Nothing is ever sent: the wait ends when the leader drops its sender.
        let landed = async { while self.0.changed().await.is_ok() {} };
        tokio::time::timeout_at(deadline, landed)
            .await
            .map_err(|_| OutOfBudget)
    }
}

impl Drop for Lead<'_> {
    fn drop(&mut self) {
        let mut shard = self.turns.shard(&self.identity).lock();
        shard.remove(&self.identity);
        // Followers see the sender go: the call landed.
        drop(self.landed.take());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IdentityKey;
    use std::time::Duration;

    fn caller(name: &str) -> Identity {
        Identity::of(&IdentityKey::from_bytes([0; 32]), "t", name.as_bytes())
    }

    #[tokio::test(start_paused = true)]
    async fn followers_wait_for_the_leader_then_the_line_is_gone() {
        let turns = Turns::new();
        let start = Instant::now();
        let budget = start + Duration::from_millis(250);
        let Place::Lead(lead) = turns.join(caller("alice")) else {
            panic!("the first leads");
        };
        let Place::Follow(landing) = turns.join(caller("alice")) else {
            panic!("the second follows");
        };
        assert!(
            matches!(turns.join(caller("bob")), Place::Lead(_)),
            "other callers are not in alice's line"
        );
        let follower = tokio::spawn(landing.by(budget));
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            !follower.is_finished(),
            "it waits while the call is in the air"
        );
        drop(lead);
        assert_eq!(follower.await.unwrap(), Ok(()));
        assert_eq!(
            start.elapsed(),
            Duration::from_millis(100),
            "released at the landing"
        );
        assert_eq!(turns.len(), 0);
        assert!(matches!(turns.join(caller("alice")), Place::Lead(_)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_follower_waits_at_most_until_its_own_deadline() {
        let turns = Turns::new();
        let arrived = Instant::now();
        let _lead = turns.join(caller("alice"));
        tokio::time::sleep(Duration::from_millis(200)).await;
        // Arrived 200 ms after the leader asked: one budget (250 ms) from its own arrival.
        let Place::Follow(landing) = turns.join(caller("alice")) else {
            panic!("follows");
        };
        let joined = Instant::now();
        assert_eq!(
            landing.by(joined + Duration::from_millis(250)).await,
            Err(OutOfBudget)
        );
        assert_eq!(Instant::now() - arrived, Duration::from_millis(450));
    }
}
