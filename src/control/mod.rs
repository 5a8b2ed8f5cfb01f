//! The fleet's control state: bans and per-caller overrides made at run time through the admin
//! API, kept in a [`Ledger`] (Redis for the fleet, or this process and its state file) and
//! read by the gate from a [`ControlView`] each instance refreshes (`refresh`, at least every
//! second) by applying the changes made since the version it knows, so a change reaches every
//! instance within a second, costs what it changes, and bans already known keep applying while
//! Redis is away. Resets of callers' buckets are announced through the ledger too, so every
//! instance forgets its cached refusals of the caller. Addresses refused on another system's
//! word (CrowdSec) are published here as a [`Blocklist`].

mod blocklist;
mod change;
mod entry;
mod ledger;
mod memory;
mod redis;
mod view;

pub use blocklist::{Block, Blocklist, Remedy};
pub use change::Change;
pub use entry::{in_force, Ban, BanTarget, Contents, Entry, Kind, Override};
pub use ledger::{Added, ControlError, Ledger, Read};
pub use memory::{MemoryLedger, StateFileError};
pub use redis::{RedisLedger, CONTROL_SCRIPT};
pub use view::{Applied, BanHit, ControlView};

use crate::clock::Clock;
use crate::limiter::{Limiter, PolicyKey};
use arc_swap::{ArcSwap, Guard};
use parking_lot::Mutex;
use std::sync::Arc;

/// How often an instance reads the ledger for changes made elsewhere.
pub const REFRESH_INTERVAL: std::time::Duration = std::time::Duration::from_millis(250);

/// How many entries each list may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// `admin.max_bans`.
    pub max_bans: usize,
    /// `admin.max_overrides`.
    pub max_overrides: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Self {
            max_bans: 100_000,
            max_overrides: 100_000,
        }
    }
}

/// The control state of this instance: its ledger and the view the gate reads.
pub struct Control {
    ledger: Box<dyn Ledger>,
    view: ArcSwap<ControlView>,
    blocklist: ArcSwap<Blocklist>,
    version: Mutex<Option<u64>>,
    /// One refresh at a time: two would each apply changes to the view they loaded.
    refreshing: tokio::sync::Mutex<()>,
    limiter: Arc<dyn Limiter>,
    bounds: Bounds,
}

/// The most pages of changes one refresh applies (a reader further behind reads on at the
/// next refresh).
const MAX_PAGES: usize = 200;

impl Control {
    /// Control kept in `ledger`, bounded by `bounds`; resets announced elsewhere make
    /// `limiter` forget the caller's refusals. The view is empty until the first refresh.
    pub fn new(ledger: Box<dyn Ledger>, limiter: Arc<dyn Limiter>, bounds: Bounds) -> Self {
        Self {
            ledger,
            view: ArcSwap::from_pointee(ControlView::default()),
            blocklist: ArcSwap::from_pointee(Blocklist::default()),
            version: Mutex::new(None),
            refreshing: tokio::sync::Mutex::new(()),
            limiter,
            bounds,
        }
    }

    /// Control kept in this process alone, with nothing banned or overridden yet.
    pub fn in_process(limiter: Arc<dyn Limiter>) -> Self {
        Self::in_process_by(limiter, Clock::System)
    }

    /// The same, its entries made and expiring by `clock`.
    pub fn in_process_by(limiter: Arc<dyn Limiter>, clock: Clock) -> Self {
        let ledger = MemoryLedger::default().with_clock(clock);
        Self::new(Box::new(ledger), limiter, Bounds::default())
    }

    /// The bans and overrides in force, as last read.
    pub fn view(&self) -> Guard<Arc<ControlView>> {
        self.view.load()
    }

    /// The addresses refused on another system's word, as last published.
    pub fn blocklist(&self) -> Guard<Arc<Blocklist>> {
        self.blocklist.load()
    }

    /// Replaces the blocklist the gate reads.
    pub fn publish_blocklist(&self, list: Arc<Blocklist>) {
        self.blocklist.store(list);
    }

    /// Reads what changed in the ledger and applies it to the view, forgetting the refusals
    /// of callers reset elsewhere.
    pub async fn refresh(&self) -> Result<(), ControlError> {
        let _one = self.refreshing.lock().await;
        for _ in 0..MAX_PAGES {
            let known = *self.version.lock();
            let (version, more) = match self.ledger.read(known).await? {
                Read::Unchanged => return Ok(()),
                Read::Whole { version, contents } => {
                    self.view.store(Arc::new(ControlView::new(contents)));
                    (version, false)
                }
                Read::Changes {
                    version,
                    changes,
                    more,
                } => {
                    let mut view = ControlView::clone(&self.view.load());
                    for change in &changes {
                        change.resets.iter().for_each(|c| self.limiter.forget(c));
                        view.apply(change);
                    }
                    self.view.store(Arc::new(view));
                    (version, more)
                }
            };
            *self.version.lock() = Some(version);
            if !more {
                break;
            }
        }
        Ok(())
    }

    /// Adds `entry`, ending after `ttl_ms` (never for `None`), under idempotency `key`. When
    /// the store does not confirm the change, the key tells whether it was made.
    pub async fn add(
        &self,
        entry: Entry,
        ttl_ms: Option<u64>,
        key: &str,
    ) -> Result<Added, ControlError> {
        let max = match entry.kind() {
            Kind::Ban => self.bounds.max_bans,
            Kind::Override => self.bounds.max_overrides,
        };
        let added = match self.ledger.add(entry, ttl_ms, max, Some(key)).await {
            Err(ControlError::Unknown(why)) => self.settle(key, why).await?,
            other => other?,
        };
        self.refresh_after_change().await;
        Ok(added)
    }

    /// The add made under `key`, when asking again finds it made; else still unknown.
    async fn settle(&self, key: &str, why: String) -> Result<Added, ControlError> {
        let Ok(Some(id)) = self.ledger.made_under(key).await else {
            return Err(ControlError::Unknown(why));
        };
        self.refresh_after_change().await;
        let view = self.view();
        let ban = view.bans().get(&id).cloned().map(Entry::Ban);
        let made = ban.or_else(|| view.overrides().get(&id).cloned().map(Entry::Override));
        made.map(Added::Created).ok_or(ControlError::Unknown(why))
    }

    /// Removes entry `id` of list `kind` under idempotency `key`; whether it was there.
    pub async fn remove(&self, kind: Kind, id: u64, key: &str) -> Result<bool, ControlError> {
        let removed = self.ledger.remove(kind, id, Some(key)).await?;
        self.refresh_after_change().await;
        Ok(removed)
    }

    /// Tells every instance that `caller`'s buckets were reset.
    pub async fn announce_reset(
        &self,
        caller: crate::identity::Identity,
    ) -> Result<(), ControlError> {
        self.ledger.announce_reset(caller).await
    }

    /// A change made here applies here at once (the others read it within a second).
    async fn refresh_after_change(&self) {
        if let Err(e) = self.refresh().await {
            log::warn!("the control state changed but could not be read back yet: {e}");
        }
    }
}

/// The policy key of the buckets callers have under an override of policy `name`: apart from
/// their own, so an override starts from a full bucket of its own size, and deleting it gives
/// the caller back the bucket they had.
pub fn override_key(name: &str) -> PolicyKey {
    PolicyKey::new(&format!("{name}!override"))
}
