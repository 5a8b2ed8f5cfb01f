//! The Redis store read and reset from outside the request path: an operator's inspect call
//! (`lua/peek.lua`: the bucket and Redis's clock in one step, nothing written) and reset (the
//! caller's keys deleted: a missing key is a full, unblocked bucket).

use super::RedisStore;
use crate::driver::PEEK_SCRIPT;
use crate::{BucketKey, BucketSpec, LimiterError, Peek};
use redis::Value;

impl RedisStore {
    /// How `key`'s bucket of shape `spec` stands now, on Redis's clock.
    pub(super) async fn peek_bucket(
        &self,
        key: BucketKey<'_>,
        spec: BucketSpec,
    ) -> Result<Peek, LimiterError> {
        let name = self.bucket_key(&key);
        let script = redis::Script::new(PEEK_SCRIPT);
        let call = async {
            let mut conn = self.driver.connection().get().await?;
            let invocation = script.key(name);
            let reply: Value = invocation
                .invoke_async(&mut conn)
                .await
                .map_err(|e| LimiterError::Store(e.to_string()))?;
            Ok(reply)
        };
        let reply = self.driver.within_budget(call).await?;
        let (now_us, raw) = match reply {
            Value::Array(parts) => match parts.as_slice() {
                [Value::Int(now), Value::BulkString(raw)] => (*now, Some(raw.clone())),
                [Value::Int(now), _] => (*now, None),
                _ => return Err(LimiterError::Store("peek.lua answered oddly".into())),
            },
            _ => return Err(LimiterError::Store("peek.lua answered oddly".into())),
        };
        let stored = raw.as_deref().and_then(Peek::decode);
        Ok(Peek::of(&spec, stored, u64::try_from(now_us).unwrap_or(0)))
    }

    /// Deletes the buckets `keys` (one caller's, so one Cluster slot) and forgets this
    /// instance's refusals of their caller.
    pub(super) async fn reset_buckets(&self, keys: &[BucketKey<'_>]) -> Result<(), LimiterError> {
        let Some(first) = keys.first() else {
            return Ok(());
        };
        let names: Vec<String> = keys.iter().map(|k| self.bucket_key(k)).collect();
        let call = async {
            let mut conn = self.driver.connection().get().await?;
            redis::cmd("DEL")
                .arg(&names)
                .query_async::<i64>(&mut conn)
                .await
                .map_err(|e| LimiterError::Store(e.to_string()))
        };
        self.driver.within_budget(call).await?;
        self.knowledge.forget(&first.identity);
        Ok(())
    }
}
