//! The Redis store's life around the requests: ready before serving (Redis answers and holds
//! the scripts, within `store.startup_wait`, and this instance announced with the fleet's size
//! read), and announced to the fleet every second so the local fallback knows this instance's
//! share. During its first second an instance announces every 100 ms while Redis answers:
//! instances started together would otherwise see one another only a second later, the first
//! of them taking the whole bucket as its share meanwhile. A failed announcement falls back to
//! the one-second cadence, so a struggling Redis is not asked more often.

use crate::limiter::driver::{ANNOUNCE_INTERVAL, MEMBERSHIP_LIFETIME};
use crate::limiter::{FleetSize, RedisDriver};
use async_trait::async_trait;
use pingora::server::ShutdownWatch;
use pingora::services::background::BackgroundService;
use std::hash::BuildHasher;
use std::sync::Arc;
use std::time::Duration;

/// Blocks until Redis answers and holds the scripts, for at most `wait`, and learns the fleet's
/// size. Returns false when the proxy starts degraded (Redis not reached).
pub(super) fn prepare(redis: &RedisDriver, fleet: &FleetSize, id: &str, wait: Duration) -> bool {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            log::warn!("cannot check Redis before serving ({e}); starting without the check");
            return false;
        }
    };
    let ready = runtime.block_on(redis.prepare(id, wait));
    match ready {
        Ok(alive) => {
            fleet.learn(alive);
            log::info!(
                "redis store ready: scripts loaded, {} instance(s) in the fleet",
                fleet.get()
            );
            true
        }
        Err(e) => {
            log::warn!(
                "redis store not ready after {wait:?} ({e}); serving degraded: on_error decides until it answers"
            );
            false
        }
    }
}

/// A name for this instance in the fleet: unique enough (the hasher's keys are random per
/// process and per call), not secret.
pub(super) fn instance_id() -> String {
    let salt = std::collections::hash_map::RandomState::new();
    format!("{:016x}", salt.hash_one(std::process::id()))
}

/// Announces this instance every [`ANNOUNCE_INTERVAL`] and learns how many are alive.
pub(super) struct FleetAnnouncer {
    redis: Arc<RedisDriver>,
    fleet: Arc<FleetSize>,
    id: String,
}

impl FleetAnnouncer {
    /// An announcer of instance `id` through `redis`, updating `fleet`.
    pub(super) fn new(redis: Arc<RedisDriver>, fleet: Arc<FleetSize>, id: String) -> Self {
        Self { redis, fleet, id }
    }
}

/// How often an instance announces itself early in its life.
const EARLY_INTERVAL: Duration = Duration::from_millis(100);

/// The wait before the next announcement of an instance started `age` ago whose last
/// announcement `succeeded` (or not).
fn next_announcement(age: Duration, succeeded: bool) -> Duration {
    match succeeded && age < ANNOUNCE_INTERVAL {
        true => EARLY_INTERVAL,
        false => ANNOUNCE_INTERVAL,
    }
}

#[async_trait]
impl BackgroundService for FleetAnnouncer {
    async fn start(&self, mut shutdown: ShutdownWatch) {
        let born = tokio::time::Instant::now();
        let mut next = born;
        loop {
            tokio::select! {
                _ = shutdown.changed() => return,
                _ = tokio::time::sleep_until(next) => {}
            }
            let asked = tokio::time::Instant::now();
            let announced = self.redis.announce(&self.id).await;
            next = asked + next_announcement(born.elapsed(), announced.is_ok());
            match announced {
                Ok(alive) => self.fleet.learn(alive),
                // Keep the last count: a membership outlives a few missed announcements.
                Err(e) => log::debug!(
                    "fleet announcement failed ({e}); keeping {} for up to {MEMBERSHIP_LIFETIME:?}",
                    self.fleet.get()
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_young_instance_announces_often_while_redis_answers_then_every_second() {
        assert_eq!(next_announcement(Duration::ZERO, true), EARLY_INTERVAL);
        let almost = ANNOUNCE_INTERVAL - Duration::from_millis(1);
        assert_eq!(next_announcement(almost, true), EARLY_INTERVAL);
        assert_eq!(
            next_announcement(almost, false),
            ANNOUNCE_INTERVAL,
            "a failed announcement is not retried sooner"
        );
        assert_eq!(
            next_announcement(ANNOUNCE_INTERVAL, true),
            ANNOUNCE_INTERVAL
        );
    }
}
