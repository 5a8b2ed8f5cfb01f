//! A JSON value kept under one Redis key (the overload switch, a decision explained): read by
//! a script, as every Redis call of the proxy is made.

use super::RedisDriver;
use redis::Value;
use serde::de::DeserializeOwned;

/// `GET` of one key.
const READ: &str = "return redis.call('GET', KEYS[1])";

/// The `what` stored as JSON under `key`, `None` when there is none; an error names `what`
/// when the stored text does not read.
pub async fn read_json<T: DeserializeOwned>(
    redis: &RedisDriver,
    key: String,
    what: &str,
) -> Result<Option<T>, String> {
    let value = redis
        .eval(READ, &[key], &[])
        .await
        .map_err(|e| e.to_string())?;
    match value {
        Value::Nil => Ok(None),
        Value::BulkString(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| format!("the stored {what} does not read: {e}")),
        other => Err(format!("unexpected reply {other:?}")),
    }
}
