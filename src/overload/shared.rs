//! Where the fleet keeps the manual switch: one Redis key, written with the switch's time to
//! live (Redis undoes it when the time is up, whichever instances are alive) and read by every
//! instance each [`crate::control::REFRESH_INTERVAL`]. Without Redis the switch is this
//! instance's alone.

use super::level::Switch;
use crate::limiter::{read_json, RedisDriver};
use async_trait::async_trait;
use std::sync::Arc;

/// A place every instance reads the switch from.
#[async_trait]
pub trait SharedSwitch: Send + Sync {
    /// The switch in force, if any.
    async fn read(&self) -> Result<Option<Switch>, String>;
    /// Sets `switch` (until its end), or clears it (`None`: back to `auto`).
    async fn write(&self, switch: Option<&Switch>, now_ms: u64) -> Result<(), String>;
}

/// `SET … PX ttl` of the switch, or `DEL` when ARGV[1] is empty.
const WRITE: &str = "if ARGV[1] == '' then return redis.call('DEL', KEYS[1]) end \
                     return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])";

/// The switch in the fleet's Redis.
pub struct RedisSwitch {
    redis: Arc<RedisDriver>,
    key: String,
}

impl RedisSwitch {
    /// The switch kept in `redis` under its prefix.
    pub fn new(redis: Arc<RedisDriver>) -> Self {
        let key = switch_key(redis.prefix());
        Self { redis, key }
    }
}

#[async_trait]
impl SharedSwitch for RedisSwitch {
    async fn read(&self) -> Result<Option<Switch>, String> {
        read_json(&self.redis, self.key.clone(), "switch").await
    }

    async fn write(&self, switch: Option<&Switch>, now_ms: u64) -> Result<(), String> {
        let args = match switch {
            Some(switch) => [
                serde_json::to_string(switch).map_err(|e| e.to_string())?,
                switch.until_ms.saturating_sub(now_ms).max(1).to_string(),
            ],
            None => [String::new(), String::new()],
        };
        let keys = [self.key.clone()];
        self.redis
            .eval(WRITE, &keys, &args)
            .await
            .map(drop)
            .map_err(|e| e.to_string())
    }
}

/// The switch's key under `prefix`, after its `:` like every other key.
fn switch_key(prefix: &str) -> String {
    format!("{prefix}:overload:switch")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_switch_lives_under_the_prefix_after_its_colon() {
        assert_eq!(super::switch_key("floodgate"), "floodgate:overload:switch");
    }
}
