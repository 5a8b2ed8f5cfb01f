//! The fleet's control state: bans and per-caller overrides made at run time through the admin
//! API, kept in a [`Ledger`] (Redis for the fleet, or this process and its state file) and
//! read by the gate from a [`ControlView`] each instance refreshes (`refresh`, at least every
//! second), so a change reaches every instance within a second and bans already known keep
//! applying while Redis is away. Resets of callers' buckets are announced through the ledger
//! too, so every instance forgets its cached refusals of the caller. Addresses refused on
//! another system's word (CrowdSec) are published here as a [`Blocklist`].

mod blocklist;
mod entry;
mod ledger;
mod memory;
mod redis;
mod view;

pub use blocklist::{Block, Blocklist, Remedy};
pub use entry::{in_force, Ban, BanTarget, Contents, Entry, Kind, Override};
pub use ledger::{ControlError, Ledger, Read};
pub use memory::{MemoryLedger, StateFileError};
pub use redis::{RedisLedger, CONTROL_SCRIPT};
pub use view::{Applied, BanHit, ControlView};

use crate::limiter::{Limiter, PolicyKey};
use arc_swap::{ArcSwap, Guard};
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

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
    limiter: Arc<dyn Limiter>,
    bounds: Bounds,
}

impl Control {
    /// Control kept in `ledger`, bounded by `bounds`; resets announced elsewhere make
    /// `limiter` forget the caller's refusals. The view is empty until the first refresh.
    pub fn new(ledger: Box<dyn Ledger>, limiter: Arc<dyn Limiter>, bounds: Bounds) -> Self {
        Self {
            ledger,
            view: ArcSwap::from_pointee(ControlView::default()),
            blocklist: ArcSwap::from_pointee(Blocklist::default()),
            version: Mutex::new(None),
            limiter,
            bounds,
        }
    }

    /// Control kept in this process alone, with nothing banned or overridden yet.
    pub fn in_process(limiter: Arc<dyn Limiter>) -> Self {
        let ledger = MemoryLedger::default();
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

    /// Reads the ledger and, when it changed, rebuilds the view and forgets the refusals of
    /// callers reset elsewhere.
    pub async fn refresh(&self) -> Result<(), ControlError> {
        let known = *self.version.lock();
        let Read::Changed {
            version,
            contents,
            resets,
        } = self.ledger.read(known).await?
        else {
            return Ok(());
        };
        for caller in &resets {
            self.limiter.forget(caller);
        }
        self.view.store(Arc::new(ControlView::new(contents)));
        *self.version.lock() = Some(version);
        Ok(())
    }

    /// Adds `entry`, ending after `ttl_ms` (never for `None`); the entry as kept.
    pub async fn add(&self, entry: Entry, ttl_ms: Option<u64>) -> Result<Entry, ControlError> {
        let max = match entry.kind() {
            Kind::Ban => self.bounds.max_bans,
            Kind::Override => self.bounds.max_overrides,
        };
        let kept = self.ledger.add(entry, ttl_ms, max).await?;
        self.refresh_after_change().await;
        Ok(kept)
    }

    /// Removes entry `id` of list `kind`; whether it was there.
    pub async fn remove(&self, kind: Kind, id: u64) -> Result<bool, ControlError> {
        let removed = self.ledger.remove(kind, id).await?;
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

/// Unix milliseconds now: the clock entries' expiry is compared with.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
