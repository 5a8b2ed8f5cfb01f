//! The fleet's announcements: instances announce themselves in Redis (`lua/fleet.lua`) and read
//! how many are alive; and before serving, an instance checks that Redis answers and holds the
//! scripts.

use super::connection::Conn;
use super::script::{Script, FLEET_SCRIPT, INFLIGHT_SCRIPT, TAKE_SCRIPT};
use super::RedisDriver;
use crate::fleet_size::MEMBERSHIP_LIFETIME;
use crate::LimiterError;
use redis::{RedisResult, Value};
use std::sync::LazyLock;
use std::time::Duration;

impl RedisDriver {
    /// Announces the instance `id` and returns how many instances are alive.
    pub async fn announce(&self, id: &str) -> Result<u32, LimiterError> {
        let conn = self.connection.get().await?;
        match tokio::time::timeout(self.relaxed_timeout(), self.announce_on(conn, id)).await {
            Ok(Ok(alive)) => Ok(alive),
            Ok(Err(e)) => Err(LimiterError::Store(e.to_string())),
            Err(_) => Err(LimiterError::Timeout),
        }
    }

    async fn announce_on(&self, mut conn: Conn, id: &str) -> RedisResult<u32> {
        static FLEET: LazyLock<Script> = LazyLock::new(|| Script::new(FLEET_SCRIPT));
        let lifetime_ms = MEMBERSHIP_LIFETIME.as_millis() as u64;
        let evalsha = FLEET.evalsha(&[format!("{}:fleet", self.prefix)], (id, lifetime_ms));
        let reply = FLEET.run_on::<Value>(&evalsha, &mut conn).await?;
        Ok(match reply {
            Value::Int(alive) => u32::try_from(alive).unwrap_or(1).max(1),
            _ => 1,
        })
    }

    /// Before serving: Redis answers and holds the scripts (loaded on every master of a
    /// Cluster), within `wait`; announces instance `id` and returns how many are alive. Uses
    /// a connection of its own, so that the shared one is not tied to the runtime this runs on.
    pub async fn prepare(&self, id: &str, wait: Duration) -> Result<u32, LimiterError> {
        let check = self.connection.with_fresh(|mut conn| async move {
            redis::cmd("PING").query_async::<String>(&mut conn).await?;
            for code in [TAKE_SCRIPT, FLEET_SCRIPT, INFLIGHT_SCRIPT] {
                let script = Script::new(code);
                script
                    .load_command()
                    .query_async::<String>(&mut conn)
                    .await?;
            }
            self.announce_on(conn, id).await
        });
        match tokio::time::timeout(wait, check).await {
            Ok(result) => result,
            Err(_) => Err(LimiterError::Timeout),
        }
    }
}
