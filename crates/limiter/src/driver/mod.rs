//! The Redis driver: how the proxy reaches Redis, apart from what it keeps there. A standalone
//! server, the master Sentinel names, or a Cluster (each call routed to its slot's master);
//! the Lua scripts and their reload; the circuit breaker; credentials kept out of every text
//! shown. The bucket store (`redis`), the control ledger, the CrowdSec sharing and the fleet's
//! announcements all call Redis through a [`RedisDriver`].

mod announce;
mod breaker;
mod commands;
pub use commands::reply_text;
mod connection;
mod credentials;
mod hash_key;
mod redact;
mod script;
mod sentinel;
mod settings;
mod slot;

pub use crate::fleet_size::{ANNOUNCE_INTERVAL, MEMBERSHIP_LIFETIME};
pub use breaker::{Breaker, BreakerSettings, Permission};
pub use hash_key::{fleet_hash_key, hash_key_name};
pub use script::{FLEET_SCRIPT, INFLIGHT_SCRIPT, PEEK_SCRIPT, TAKE_SCRIPT};
pub use sentinel::{SentinelSettings, WATCH_INTERVAL};
pub use settings::RedisSettings;
pub use slot::slot_of;

pub(crate) use connection::Connection;
pub(crate) use script::Script;

use crate::LimiterError;
use std::sync::Arc;
use std::time::Duration;

/// The connections to one Redis (or Cluster) and the budget of a call; cheap to share.
pub struct RedisDriver {
    /// The decisions' connection: the bucket store's calls and the fleet's announcements.
    connection: Arc<Connection>,
    /// A connection of its own for the control plane (scripts of the ledger, CrowdSec and
    /// the console, nonces): its polling never queues behind, or ahead of, the decisions.
    side: Arc<Connection>,
    prefix: String,
    timeout: Duration,
}

impl RedisDriver {
    /// A driver for `settings`; nothing is connected until the first call.
    pub fn new(settings: &RedisSettings) -> Result<Self, LimiterError> {
        Ok(Self {
            connection: Arc::new(Connection::new(settings)?),
            side: Arc::new(Connection::new(settings)?),
            prefix: settings.prefix.clone(),
            timeout: settings.timeout,
        })
    }

    /// The prefix of every key the proxy writes.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The budget of one call on the request path.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The budget of a call off the request path: the call budget, at least 500 ms.
    pub(crate) fn relaxed_timeout(&self) -> Duration {
        self.timeout.max(Duration::from_millis(500))
    }

    /// Whether this is a Redis Cluster (a call may then touch one slot only).
    pub fn is_cluster(&self) -> bool {
        self.connection.is_cluster()
    }

    /// The decisions' connection.
    pub(crate) fn connection(&self) -> &Arc<Connection> {
        &self.connection
    }

    /// Whether Redis answers within `budget` and takes writes (see [`Connection::ping`]).
    pub async fn ping(&self, budget: Duration) -> Result<(), LimiterError> {
        self.connection.ping(budget).await
    }

    /// Runs `call` within the relaxed budget (these calls are not on the request path).
    pub(crate) async fn within_budget<T>(
        &self,
        call: impl std::future::Future<Output = Result<T, LimiterError>>,
    ) -> Result<T, LimiterError> {
        tokio::time::timeout(self.relaxed_timeout(), call)
            .await
            .unwrap_or(Err(LimiterError::Timeout))
    }
}
