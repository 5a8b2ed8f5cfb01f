//! Redis behind Sentinel: the master is asked of the sentinels (`SENTINEL
//! get-master-addr-by-name`), and asked again every [`WATCH_INTERVAL`] by one task, so a
//! failover, planned or not, moves every call to the new master within that time. redis-rs
//! alone finds the master only when it connects and never follows a switch (redis-rs#1438):
//! after a failover the old master answers writes with `READONLY`, which is no I/O error, and
//! a connection manager would stay on it for ever. While the master moves, `on_error` decides
//! as for any outage.

use super::RedisSettings;
use crate::limiter::LimiterError;
use arc_swap::ArcSwapOption;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::IntoConnectionInfo;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// How often the sentinels are asked where the master is.
pub const WATCH_INTERVAL: Duration = Duration::from_millis(250);
/// How long one sentinel may take to answer.
const SENTINEL_BUDGET: Duration = Duration::from_millis(500);

/// `[store] sentinels`, `sentinel_master` and the sentinels' own credentials.
#[derive(Clone, PartialEq)]
pub struct SentinelSettings {
    /// The sentinels, `redis://host:26379` or `rediss://…` (TLS to the data nodes too).
    pub nodes: Vec<String>,
    /// The name the sentinels monitor the master by.
    pub master: String,
    /// The sentinels' user name, if they need one.
    pub username: Option<String>,
    /// The sentinels' password, if they need one.
    pub password: Option<String>,
}

/// The master now and a connection to it.
struct Master {
    address: (String, u16),
    manager: ConnectionManager,
}

/// Where the master is, as the sentinels say, and a connection that follows it.
pub(crate) struct SentinelTarget {
    sentinels: Vec<redis::Client>,
    master_name: String,
    tls: bool,
    username: Option<String>,
    password: Option<String>,
    config: ConnectionManagerConfig,
    current: ArcSwapOption<Master>,
    asking: tokio::sync::Mutex<()>,
    watching: AtomicBool,
}

impl SentinelTarget {
    /// A target for `sentinel`; the data nodes take `settings`' credentials.
    pub(crate) fn new(
        sentinel: &SentinelSettings,
        settings: &RedisSettings,
        config: ConnectionManagerConfig,
    ) -> Result<Arc<Self>, LimiterError> {
        let sentinels = sentinel
            .nodes
            .iter()
            .map(|url| {
                let info = url.as_str().into_connection_info().map_err(|e| {
                    LimiterError::Store(format!("bad sentinel URL: {}", e.category()))
                })?;
                let mut redis_info = info.redis_settings().clone();
                if let Some(user) = &sentinel.username {
                    redis_info = redis_info.set_username(user);
                }
                if let Some(password) = &sentinel.password {
                    redis_info = redis_info.set_password(password);
                }
                redis::Client::open(info.set_redis_settings(redis_info))
                    .map_err(|e| LimiterError::Store(e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Arc::new(Self {
            sentinels,
            master_name: sentinel.master.clone(),
            tls: sentinel.nodes.iter().any(|n| n.starts_with("rediss://")),
            username: settings.username.clone(),
            password: settings.password.clone(),
            config,
            current: ArcSwapOption::empty(),
            asking: tokio::sync::Mutex::new(()),
            watching: AtomicBool::new(false),
        }))
    }

    /// A connection to the master, found first if none is known; from then on the master is
    /// watched.
    pub(crate) async fn get(self: &Arc<Self>) -> Result<ConnectionManager, LimiterError> {
        self.watch();
        if let Some(master) = self.current.load_full() {
            return Ok(master.manager.clone());
        }
        // One caller asks; the others wait for its answer.
        let _asking = self.asking.lock().await;
        if let Some(master) = self.current.load_full() {
            return Ok(master.manager.clone());
        }
        let address = self.master_address().await?;
        Ok(self.follow(address)?.manager.clone())
    }

    /// A client of the master now, for a connection of the caller's own.
    pub(crate) async fn master_client(&self) -> Result<redis::Client, LimiterError> {
        let address = self.master_address().await?;
        self.client_of(&address)
    }

    /// Where the master is, by the first sentinel that knows.
    async fn master_address(&self) -> Result<(String, u16), LimiterError> {
        let mut last = String::from("no sentinel is configured");
        for sentinel in &self.sentinels {
            let ask = async {
                let mut conn = sentinel.get_multiplexed_async_connection().await?;
                redis::cmd("SENTINEL")
                    .arg("get-master-addr-by-name")
                    .arg(&self.master_name)
                    .query_async::<Option<(String, u16)>>(&mut conn)
                    .await
            };
            match tokio::time::timeout(SENTINEL_BUDGET, ask).await {
                Ok(Ok(Some(address))) => return Ok(address),
                Ok(Ok(None)) => last = format!("no sentinel knows a master `{}`", self.master_name),
                Ok(Err(e)) => last = e.to_string(),
                Err(_) => last = "a sentinel did not answer in time".into(),
            }
        }
        Err(LimiterError::Store(format!(
            "cannot find the master: {last}"
        )))
    }

    /// Connects (lazily) to the master at `address` and makes it the current one.
    fn follow(&self, address: (String, u16)) -> Result<Arc<Master>, LimiterError> {
        let client = self.client_of(&address)?;
        let manager = ConnectionManager::new_lazy_with_config(client, self.config.clone())
            .map_err(|e| LimiterError::Store(e.to_string()))?;
        let master = Arc::new(Master { address, manager });
        self.current.store(Some(master.clone()));
        Ok(master)
    }

    fn client_of(&self, (host, port): &(String, u16)) -> Result<redis::Client, LimiterError> {
        let scheme = if self.tls { "rediss" } else { "redis" };
        let host = match host.contains(':') {
            true => format!("[{host}]"),
            false => host.clone(),
        };
        let url = format!("{scheme}://{host}:{port}");
        let info = url
            .as_str()
            .into_connection_info()
            .map_err(|e| LimiterError::Store(format!("bad master address: {}", e.category())))?;
        let mut redis_info = info.redis_settings().clone();
        if let Some(user) = &self.username {
            redis_info = redis_info.set_username(user);
        }
        if let Some(password) = &self.password {
            redis_info = redis_info.set_password(password);
        }
        redis::Client::open(info.set_redis_settings(redis_info))
            .map_err(|e| LimiterError::Store(e.to_string()))
    }

    /// Starts the one task that asks the sentinels where the master is, in the caller's
    /// runtime; it ends with the target.
    fn watch(self: &Arc<Self>) {
        if self.watching.swap(true, Ordering::AcqRel) {
            return;
        }
        let target: Weak<Self> = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(WATCH_INTERVAL);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(target) = target.upgrade() else {
                    return;
                };
                target.check_master().await;
            }
        });
    }

    /// Moves to the master the sentinels name, if it is not the current one.
    async fn check_master(&self) {
        let Ok(address) = self.master_address().await else {
            return;
        };
        let known = self.current.load();
        if known.as_ref().is_some_and(|m| m.address == address) {
            return;
        }
        let _asking = self.asking.lock().await;
        let moved = known.is_some();
        match self.follow(address.clone()) {
            Ok(_) if moved => log::warn!(
                "redis master `{}` moved to {}:{}; calls follow it",
                self.master_name,
                address.0,
                address.1
            ),
            Ok(_) => {}
            Err(e) => log::warn!("cannot connect to the new redis master: {e}"),
        }
    }
}

/// How a store's URLs are shown with the sentinels': no credentials.
pub(crate) fn describe(sentinel: &SentinelSettings) -> String {
    let nodes: Vec<String> = sentinel
        .nodes
        .iter()
        .map(|n| super::redact::redact_url(n))
        .collect();
    format!(
        "sentinel master `{}` via [{}]",
        sentinel.master,
        nodes.join(", ")
    )
}
