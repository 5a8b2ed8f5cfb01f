//! The fleet's identity hash key, kept in Redis so that every instance on one Redis makes the
//! same digests (and so the same bucket keys) without configuration: the first instance stores
//! random secret text with `SET <prefix>:hash_key <text> NX`, and every instance reads back
//! whatever is stored. Operators may also store their own text there (32 bytes at least).

use super::connection::Connection;
use super::RedisSettings;
use crate::LimiterError;

/// The Redis key of the fleet's hash key.
pub fn hash_key_name(prefix: &str) -> String {
    format!("{prefix}:hash_key")
}

/// Stores `candidate` as the fleet's secret unless one is stored already, and returns the
/// stored one. Uses a connection of its own, so it may run on a short-lived runtime.
pub async fn fleet_hash_key(
    settings: &RedisSettings,
    candidate: &str,
) -> Result<String, LimiterError> {
    let store_error = |e: redis::RedisError| LimiterError::Store(e.to_string());
    let connection = Connection::new(settings)?;
    let mut conn = connection.get().await?;
    let name = hash_key_name(&settings.prefix);
    let _: Option<String> = redis::cmd("SET")
        .arg(&name)
        .arg(candidate)
        .arg("NX")
        .query_async(&mut conn)
        .await
        .map_err(store_error)?;
    let stored: Option<String> = redis::cmd("GET")
        .arg(&name)
        .query_async(&mut conn)
        .await
        .map_err(store_error)?;
    stored.ok_or_else(|| LimiterError::Store(format!("`{name}` vanished after it was set")))
}
