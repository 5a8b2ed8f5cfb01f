//! Calls the rest of the proxy makes on the side connection (the fleet's control state,
//! CrowdSec's shared decisions, the console's rates, nonces): a script by EVALSHA (loaded when
//! Redis does not hold it), SET NX, a hash read a part at a time.

use super::script::Script;
use super::RedisDriver;
use crate::LimiterError;
use redis::Value;
use std::sync::{Arc, Mutex, PoisonError};

impl RedisDriver {
    /// Runs the Lua `code` on `keys` (one Cluster slot) with `args`, on the side connection;
    /// its reply. [`LimiterError::Unreachable`] and [`LimiterError::BreakerOpen`] say the
    /// script never ran; after any other error it may have.
    pub async fn eval(
        &self,
        code: &'static str,
        keys: &[String],
        args: &[String],
    ) -> Result<Value, LimiterError> {
        let script = hashed(code);
        let call = async {
            let mut conn = self.side.get().await.map_err(unreachable)?;
            script
                .run_on::<Value>(&script.evalsha(keys, args), &mut conn)
                .await
                .map_err(|e| match e.is_connection_refusal() {
                    true => LimiterError::Unreachable(e.to_string()),
                    false => LimiterError::Store(e.to_string()),
                })
        };
        self.within_budget(call).await
    }

    /// Marks `key` used for `ttl_ms` (`SET key 1 NX PX ttl`): `true` the first time, `false`
    /// while it is marked. One round trip on the side connection, within the driver's budget.
    pub async fn set_once(&self, key: &str, ttl_ms: u64) -> Result<bool, LimiterError> {
        let call = async {
            let mut conn = self.side.get().await.map_err(unreachable)?;
            redis::cmd("SET")
                .arg(key)
                .arg(1)
                .arg("NX")
                .arg("PX")
                .arg(ttl_ms.max(1))
                .query_async::<Option<String>>(&mut conn)
                .await
                .map(|set| set.is_some())
                .map_err(|e| LimiterError::Store(e.to_string()))
        };
        // A request waits on this (a signed request, a challenge's solution): the store's own
        // budget, not the control plane's longer one.
        let budget = self.timeout;
        tokio::time::timeout(budget, call)
            .await
            .unwrap_or(Err(LimiterError::Timeout))
    }

    /// Every value of the hash at `key`, read with HSCAN [`HSCAN_COUNT`] at a time (so a big
    /// hash never holds Redis up the way one HVALS would). Values changed meanwhile may be
    /// missed or seen twice: the caller reconciles with a log of changes.
    pub async fn hash_values(&self, key: &str) -> Result<Vec<String>, LimiterError> {
        let budget = self.relaxed_timeout();
        let mut values = Vec::new();
        let mut cursor = 0u64;
        loop {
            let call = async {
                let mut conn = self.side.get().await?;
                redis::cmd("HSCAN")
                    .arg(key)
                    .arg(cursor)
                    .arg("COUNT")
                    .arg(HSCAN_COUNT)
                    .query_async::<(u64, Vec<String>)>(&mut conn)
                    .await
                    .map_err(|e| LimiterError::Store(e.to_string()))
            };
            let (next, pairs) = tokio::time::timeout(budget, call)
                .await
                .unwrap_or(Err(LimiterError::Timeout))?;
            values.extend(pairs.into_iter().skip(1).step_by(2));
            if next == 0 {
                return Ok(values);
            }
            cursor = next;
        }
    }
}

/// A script's reply as text (a bulk or simple string), if it is one: how the control plane,
/// CrowdSec's shared decisions and the proofs read what their scripts return.
pub fn reply_text(value: &Value) -> Option<String> {
    match value {
        Value::BulkString(bytes) => String::from_utf8(bytes.clone()).ok(),
        Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    }
}

/// `code` as a script with its SHA1: hashed the first time it runs, not on every call (a
/// control-plane script is kilobytes of text). Known by its text, not by where the text lives
/// (two copies of one script are one script; an address says nothing about the text).
fn hashed(code: &'static str) -> Arc<Script> {
    /// Each script's text with the script (a handful: a list beats hashing kilobytes).
    type Known = Vec<(&'static str, Arc<Script>)>;
    static KNOWN: Mutex<Known> = Mutex::new(Vec::new());
    let mut known = KNOWN.lock().unwrap_or_else(PoisonError::into_inner);
    // Texts of another length are passed over without reading them.
    if let Some((_, script)) = known.iter().find(|(text, _)| *text == code) {
        return script.clone();
    }
    let script = Arc::new(Script::new(code));
    known.push((code, script.clone()));
    script
}

/// Entries one HSCAN call asks for: 2,000 ban entries took 12.7 ms of Redis on a loaded 2-core
/// machine (past `SLOWLOG`'s 10 ms, and a stall for every other caller); 500 keep a call to a
/// few milliseconds for a few more round trips.
const HSCAN_COUNT: u64 = 500;

/// A failure to get a connection: the script was not sent.
fn unreachable(e: LimiterError) -> LimiterError {
    match e {
        LimiterError::Store(why) => LimiterError::Unreachable(why),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::hashed;
    use std::sync::Arc;

    #[test]
    fn a_script_is_known_by_its_text_not_its_address() {
        let text = "return 'known by text'";
        let copy: &'static str = String::from(text).leak();
        assert_ne!(text.as_ptr(), copy.as_ptr());
        assert!(Arc::ptr_eq(&hashed(text), &hashed(copy)));
        // A prefix at the same address is another script.
        let prefix = &text[..text.len() - 1];
        assert_eq!(prefix.as_ptr(), text.as_ptr());
        assert_ne!(hashed(prefix).hash(), hashed(text).hash());
    }
}
