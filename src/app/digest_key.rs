//! Which key identity digests are made with, chosen once when the server is built:
//! `identity.hash_key` when configured; else, on the memory store, a random key of this
//! process; else, on the Redis store, the fleet's key kept in Redis (the first instance stores
//! it, every instance reads it).
//!
//! If Redis cannot be asked within [`FLEET_KEY_WAIT`], the instance logs a warning and uses a
//! random key of its own: it still limits, but apart from the fleet (its callers have buckets
//! of their own in Redis) until it is restarted with Redis up. Configure `identity.hash_key`
//! where that matters: a configured key never depends on Redis being up at start.

use super::BuildError;
use crate::identity::IdentityKey;
use crate::limiter::{fleet_hash_key, RedisSettings, StoreSettings};
use std::time::Duration;

/// How long the build waits for Redis to hand out the fleet's key.
pub const FLEET_KEY_WAIT: Duration = Duration::from_secs(2);

/// The key identity digests are made with, for a config whose `identity.hash_key` is
/// `configured` and whose store is `store`.
pub(super) fn digest_key(
    configured: Option<&IdentityKey>,
    store: &StoreSettings,
) -> Result<IdentityKey, BuildError> {
    match (configured, store) {
        (Some(key), _) => Ok(key.clone()),
        (None, StoreSettings::Memory { .. }) => Ok(IdentityKey::random()?),
        (None, StoreSettings::Redis(redis)) => match fleet_key(redis) {
            Ok(key) => Ok(key),
            Err(why) => {
                log::warn!(
                    "cannot read the fleet's identity hash key from redis ({why}); this instance \
                     uses a random key of its own and limits apart from the fleet until it is \
                     restarted (configure identity.hash_key to avoid this)"
                );
                Ok(IdentityKey::random()?)
            }
        },
    }
}

/// The fleet's key from Redis, waiting at most [`FLEET_KEY_WAIT`], on a runtime of its own in
/// a thread of its own (the server's runtimes do not exist yet, and a caller inside some other
/// runtime must not block it).
fn fleet_key(redis: &RedisSettings) -> Result<IdentityKey, String> {
    let candidate = IdentityKey::random_secret().map_err(|e| e.to_string())?;
    let ask = || -> Result<String, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        runtime
            .block_on(async {
                tokio::time::timeout(FLEET_KEY_WAIT, fleet_hash_key(redis, &candidate)).await
            })
            .map_err(|_| format!("no answer within {FLEET_KEY_WAIT:?}"))?
            .map_err(|e| e.to_string())
    };
    let secret = std::thread::scope(|scope| scope.spawn(ask).join())
        .map_err(|_| "the thread asking redis panicked".to_owned())??;
    IdentityKey::from_secret(&secret).map_err(|e| e.to_string())
}
