//! Asking the sentinels: where the master is, and, during a failover, which replica they are
//! promoting. One connection per sentinel is kept (dropped on error, made again on the next
//! question), so asking every tick costs a round trip, not a connection.

use crate::LimiterError;
use redis::aio::MultiplexedConnection;
use redis::{RedisResult, Value};
use std::time::Duration;

/// How long one sentinel may take to answer.
const SENTINEL_BUDGET: Duration = Duration::from_millis(500);

/// A data node's address.
pub(super) type Address = (String, u16);

/// The sentinels of one master.
pub(super) struct Sentinels {
    clients: Vec<redis::Client>,
    connections: tokio::sync::Mutex<Vec<Option<MultiplexedConnection>>>,
    master: String,
}

impl Sentinels {
    /// The sentinels reached by `clients`, watching the master called `master`.
    pub(super) fn new(clients: Vec<redis::Client>, master: String) -> Self {
        let connections = tokio::sync::Mutex::new(vec![None; clients.len()]);
        Self {
            clients,
            connections,
            master,
        }
    }

    /// The name the sentinels know the master by.
    pub(super) fn master_name(&self) -> &str {
        &self.master
    }

    /// Where the master is, by the first sentinel that knows.
    pub(super) async fn master_address(&self) -> Result<Address, LimiterError> {
        let mut last = String::from("no sentinel is configured");
        for i in 0..self.clients.len() {
            let mut cmd = redis::cmd("SENTINEL");
            cmd.arg("get-master-addr-by-name").arg(&self.master);
            match self.ask::<Option<Address>>(i, &cmd).await {
                Ok(Some(address)) => return Ok(address),
                Ok(None) => last = format!("no sentinel knows a master `{}`", self.master),
                Err(e) => last = e,
            }
        }
        Err(LimiterError::Store(format!(
            "cannot find the master: {last}"
        )))
    }

    /// The replica a failover is promoting (flag `promoted`), by the first sentinel that
    /// answers, if any.
    pub(super) async fn promoted(&self) -> Option<Address> {
        for i in 0..self.clients.len() {
            let mut cmd = redis::cmd("SENTINEL");
            cmd.arg("replicas").arg(&self.master);
            let Ok(replicas) = self.ask::<Vec<Vec<String>>>(i, &cmd).await else {
                continue;
            };
            return replicas.iter().find_map(|fields| promoted_address(fields));
        }
        None
    }

    /// `cmd` asked of sentinel `i` on its kept connection, within the budget.
    async fn ask<T: redis::FromRedisValue>(&self, i: usize, cmd: &redis::Cmd) -> Result<T, String> {
        let mut connections = self.connections.lock().await;
        let call = async {
            if connections[i].is_none() {
                connections[i] = Some(self.clients[i].get_multiplexed_async_connection().await?);
            }
            let conn = connections[i].as_mut().expect("made just above");
            cmd.query_async::<T>(conn).await
        };
        let answer: Result<RedisResult<T>, _> = tokio::time::timeout(SENTINEL_BUDGET, call).await;
        match answer {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => {
                connections[i] = None;
                Err(e.to_string())
            }
            Err(_) => {
                connections[i] = None;
                Err("a sentinel did not answer in time".into())
            }
        }
    }
}

/// The address of a replica described by `fields` (`SENTINEL replicas`: name, value, …) if
/// its flags say the sentinels are promoting it.
fn promoted_address(fields: &[String]) -> Option<Address> {
    let field = |name: &str| {
        fields
            .chunks(2)
            .find(|kv| kv.first().is_some_and(|k| k == name))
            .and_then(|kv| kv.get(1))
    };
    let promoted = field("flags")?.split(',').any(|f| f == "promoted");
    let address = (field("ip")?.clone(), field("port")?.parse().ok()?);
    promoted.then_some(address)
}

/// Whether the server at `client` says it is a master now.
pub(super) async fn is_master(client: &redis::Client) -> bool {
    let ask = async {
        let mut conn = client.get_multiplexed_async_connection().await?;
        redis::cmd("ROLE")
            .query_async::<Vec<Value>>(&mut conn)
            .await
    };
    matches!(
        tokio::time::timeout(SENTINEL_BUDGET, ask).await,
        Ok(Ok(role)) if matches!(role.first(), Some(Value::BulkString(r)) if r == b"master")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_promoted_replica_is_found_by_its_flag() {
        let fields = |flags: &str| -> Vec<String> {
            [
                "name",
                "127.0.0.1:7001",
                "ip",
                "127.0.0.1",
                "port",
                "7001",
                "flags",
                flags,
            ]
            .iter()
            .map(|s| s.to_string())
            .collect()
        };
        assert_eq!(
            promoted_address(&fields("slave,promoted")),
            Some(("127.0.0.1".into(), 7001))
        );
        assert_eq!(promoted_address(&fields("slave")), None);
    }
}
