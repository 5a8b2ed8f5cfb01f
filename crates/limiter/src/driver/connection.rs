//! The connection to Redis: one multiplexed connection to a standalone server, or a cluster
//! connection that routes each call to its slot's master and follows MOVED/ASK and failovers.

use super::credentials::connection_info;
use super::sentinel::SentinelTarget;
use super::RedisSettings;
use crate::LimiterError;
use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// How long a first connection (and a cluster's slot discovery) may take.
const CONNECT_BUDGET: Duration = Duration::from_secs(1);

// One per process, never moved around: the size difference of the variants costs nothing.
#[allow(clippy::large_enum_variant)]
enum Target {
    Single(redis::Client),
    Cluster(ClusterClient),
    Sentinel(Arc<SentinelTarget>),
}

/// A live connection of either kind; cheap to clone.
#[derive(Clone)]
pub(crate) enum Conn {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::Single(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::Single(c) => c.req_packed_commands(pipeline, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Single(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
        }
    }
}

/// How long a command may wait for its reply: the call budget, at least 500 ms (redis-rs's
/// own default, which would otherwise cap a longer budget).
fn response_timeout(settings: &RedisSettings) -> Duration {
    settings.timeout.max(Duration::from_millis(500))
}

/// How the connection to one server (standalone, or the master Sentinel names) behaves.
fn manager_config(response_timeout: Duration) -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_connection_timeout(Some(CONNECT_BUDGET))
        .set_number_of_retries(1)
        .set_min_delay(Duration::from_millis(50))
        .set_max_delay(Duration::from_millis(200))
        .set_response_timeout(Some(response_timeout))
}

/// Connects on first use and keeps the connection.
pub(crate) struct Connection {
    response_timeout: Duration,
    target: Target,
    single: OnceLock<ConnectionManager>,
    cluster: tokio::sync::OnceCell<ClusterConnection>,
}

fn store_error(e: impl std::fmt::Display) -> LimiterError {
    LimiterError::Store(e.to_string())
}

impl Connection {
    /// A connection for `settings`: a cluster when seed `nodes` are given, else `url`.
    pub(crate) fn new(settings: &RedisSettings) -> Result<Self, LimiterError> {
        // rediss:// needs a TLS crypto provider; installing it twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let with_credentials =
            |url: &str| connection_info(url, "Redis URL", &settings.username, &settings.password);
        let target = if let Some(sentinel) = &settings.sentinel {
            Target::Sentinel(SentinelTarget::new(
                sentinel,
                (&settings.username, &settings.password),
                manager_config(response_timeout(settings)),
            )?)
        } else if settings.nodes.is_empty() {
            Target::Single(
                redis::Client::open(with_credentials(&settings.url)?).map_err(store_error)?,
            )
        } else {
            let nodes = settings
                .nodes
                .iter()
                .map(|n| with_credentials(n))
                .collect::<Result<Vec<_>, _>>()?;
            let client = ClusterClient::builder(nodes)
                .retries(2)
                .min_retry_wait(20)
                .max_retry_wait(200)
                .connection_timeout(CONNECT_BUDGET)
                // A master that stops answering must not hold a call for ever.
                .response_timeout(response_timeout(settings))
                .build()
                .map_err(store_error)?;
            Target::Cluster(client)
        };
        Ok(Self {
            response_timeout: response_timeout(settings),
            target,
            single: OnceLock::new(),
            cluster: tokio::sync::OnceCell::new(),
        })
    }

    /// Whether this is a Redis Cluster.
    pub(crate) fn is_cluster(&self) -> bool {
        matches!(self.target, Target::Cluster(_))
    }

    /// The connection, created on first use inside the caller's runtime (its background tasks
    /// live there). A standalone connection connects lazily and reconnects by itself; a
    /// cluster connection discovers the slots first, within a bounded time.
    pub(crate) async fn get(&self) -> Result<Conn, LimiterError> {
        match &self.target {
            Target::Single(client) => {
                if let Some(manager) = self.single.get() {
                    return Ok(Conn::Single(manager.clone()));
                }
                let config = manager_config(self.response_timeout);
                let manager = ConnectionManager::new_lazy_with_config(client.clone(), config)
                    .map_err(store_error)?;
                Ok(Conn::Single(self.single.get_or_init(|| manager).clone()))
            }
            Target::Sentinel(target) => target.get().await.map(Conn::Single),
            Target::Cluster(client) => {
                let connect = async {
                    match tokio::time::timeout(CONNECT_BUDGET, client.get_async_connection()).await
                    {
                        Ok(Ok(conn)) => Ok(conn),
                        Ok(Err(e)) => Err(store_error(e)),
                        Err(_) => Err(LimiterError::Timeout),
                    }
                };
                self.cluster
                    .get_or_try_init(|| connect)
                    .await
                    .cloned()
                    .map(Conn::Cluster)
            }
        }
    }

    /// Runs `work` on a connection of its own, made now and dropped after: for checks that
    /// must not tie the shared connection to the runtime they run on.
    pub(crate) async fn with_fresh<F, Fut, T>(&self, work: F) -> Result<T, LimiterError>
    where
        F: FnOnce(Conn) -> Fut,
        Fut: std::future::Future<Output = redis::RedisResult<T>>,
    {
        let conn = match &self.target {
            Target::Single(client) => {
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(CONNECT_BUDGET))
                    .set_number_of_retries(0);
                Conn::Single(
                    ConnectionManager::new_with_config(client.clone(), config)
                        .await
                        .map_err(store_error)?,
                )
            }
            Target::Cluster(client) => {
                Conn::Cluster(client.get_async_connection().await.map_err(store_error)?)
            }
            Target::Sentinel(target) => {
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(CONNECT_BUDGET))
                    .set_number_of_retries(0);
                let client = target.master_client().await?;
                Conn::Single(
                    ConnectionManager::new_with_config(client, config)
                        .await
                        .map_err(store_error)?,
                )
            }
        };
        work(conn).await.map_err(store_error)
    }

    /// Whether Redis answers a PING within `budget` and, but for a Cluster (whose client
    /// writes to masters only), takes writes: a replica answers PING but refuses every
    /// decision with `READONLY`.
    pub(crate) async fn ping(&self, budget: Duration) -> Result<(), LimiterError> {
        let mut conn = self.get().await?;
        let cluster = self.is_cluster();
        let check = async {
            redis::cmd("PING").query_async::<String>(&mut conn).await?;
            if cluster {
                return Ok::<_, redis::RedisError>(None);
            }
            // A server that does not let us ask (ACL) is taken at its word.
            let role = redis::cmd("ROLE")
                .query_async::<Vec<Value>>(&mut conn)
                .await;
            Ok(match role.as_deref() {
                Ok([Value::BulkString(role), ..]) => {
                    Some(String::from_utf8_lossy(role).into_owned())
                }
                _ => None,
            })
        };
        match tokio::time::timeout(budget, check).await {
            Ok(Ok(Some(role))) if role != "master" => Err(LimiterError::Store(format!(
                "redis is a read-only {role}: no decision can be written"
            ))),
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(store_error(e)),
            Err(_) => Err(LimiterError::Timeout),
        }
    }
}
