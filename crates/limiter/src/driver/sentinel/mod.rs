//! Redis behind Sentinel: the master is asked of the sentinels (`SENTINEL
//! get-master-addr-by-name`), and asked again every [`WATCH_INTERVAL`] by one task, so a
//! failover, planned or not, moves every call to the new master within that time. redis-rs
//! alone finds the master only when it connects and never follows a switch (redis-rs#1438):
//! after a failover the old master answers writes with `READONLY`, which is no I/O error, and
//! a connection manager would stay on it for ever. While the master moves, `on_error` decides
//! as for any outage.

mod ask;

use super::credentials::connection_info;
use crate::LimiterError;
use arc_swap::ArcSwapOption;
use ask::{Address, Sentinels};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// How often the sentinels are asked where the master is.
pub const WATCH_INTERVAL: Duration = Duration::from_millis(100);

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
    address: Address,
    manager: ConnectionManager,
}

/// Where the master is, as the sentinels say, and a connection that follows it.
pub(crate) struct SentinelTarget {
    sentinels: Sentinels,
    tls: bool,
    username: Option<String>,
    password: Option<String>,
    config: ConnectionManagerConfig,
    current: ArcSwapOption<Master>,
    asking: tokio::sync::Mutex<()>,
    watching: AtomicBool,
}

impl SentinelTarget {
    /// A target for `sentinel`; the data nodes take the credentials `username` and `password`.
    pub(crate) fn new(
        sentinel: &SentinelSettings,
        (username, password): (&Option<String>, &Option<String>),
        config: ConnectionManagerConfig,
    ) -> Result<Arc<Self>, LimiterError> {
        let sentinels = sentinel
            .nodes
            .iter()
            .map(|url| {
                let info =
                    connection_info(url, "sentinel URL", &sentinel.username, &sentinel.password)?;
                redis::Client::open(info).map_err(|e| LimiterError::Store(e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Arc::new(Self {
            sentinels: Sentinels::new(sentinels, sentinel.master.clone()),
            tls: sentinel.nodes.iter().any(|n| n.starts_with("rediss://")),
            username: username.clone(),
            password: password.clone(),
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
        let address = self.sentinels.master_address().await?;
        Ok(self.follow(address)?.manager.clone())
    }

    /// A client of the master now, for a connection of the caller's own.
    pub(crate) async fn master_client(&self) -> Result<redis::Client, LimiterError> {
        let address = self.sentinels.master_address().await?;
        self.client_of(&address)
    }

    /// Connects (lazily) to the master at `address` and makes it the current one.
    fn follow(&self, address: Address) -> Result<Arc<Master>, LimiterError> {
        let client = self.client_of(&address)?;
        let manager = ConnectionManager::new_lazy_with_config(client, self.config.clone())
            .map_err(|e| LimiterError::Store(e.to_string()))?;
        let master = Arc::new(Master { address, manager });
        self.current.store(Some(master.clone()));
        Ok(master)
    }

    fn client_of(&self, (host, port): &Address) -> Result<redis::Client, LimiterError> {
        let scheme = if self.tls { "rediss" } else { "redis" };
        let host = match host.contains(':') {
            true => format!("[{host}]"),
            false => host.clone(),
        };
        let url = format!("{scheme}://{host}:{port}");
        let info = connection_info(&url, "master address", &self.username, &self.password)?;
        redis::Client::open(info).map_err(|e| LimiterError::Store(e.to_string()))
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

    /// Moves to the master the sentinels name, or, during a failover, to the replica they
    /// are promoting as soon as it says it is a master: the old master keeps taking writes
    /// until the sentinels reconfigure it, and what it takes then is lost, so the sooner the
    /// better.
    async fn check_master(&self) {
        let Ok(named) = self.sentinels.master_address().await else {
            return;
        };
        let address = match self.sentinels.promoted().await {
            Some(promoted) if promoted != named => match self.client_of(&promoted) {
                Ok(client) if ask::is_master(&client).await => promoted,
                _ => named,
            },
            _ => named,
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
                self.sentinels.master_name(),
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
