//! Where the control state is kept: the narrow interface of the memory ledger (this process,
//! and a state file) and the Redis ledger (one state for the fleet).

use super::entry::{Contents, Entry, Kind};
use crate::identity::Identity;
use async_trait::async_trait;

/// Why a change could not be made (nothing was changed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    /// The list holds its maximum already.
    #[error("{} {}s are held, the most `admin.max_{}s` allows; delete some or raise it", .max, .kind.word(), .kind.word())]
    Full {
        /// The list.
        kind: Kind,
        /// Its bound.
        max: usize,
    },
    /// The store cannot be reached (Redis down): the change was not made.
    #[error("the control state cannot be changed now: {0}")]
    Unavailable(String),
}

/// What a read of the ledger found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    /// Nothing changed since the version the reader knows.
    Unchanged,
    /// The state now, its version, and the callers reset in the last seconds.
    Changed {
        /// The state's version.
        version: u64,
        /// Every entry.
        contents: Contents,
        /// Callers whose buckets were reset recently (their refusals must be forgotten).
        resets: Vec<Identity>,
    },
}

/// A place the control state is kept.
#[async_trait]
pub trait Ledger: Send + Sync {
    /// Numbers and adds `entry`, ending `ttl_ms` from now (never for `None`), unless its list
    /// holds `max` entries; an override replaces one on the same policy and caller. Returns
    /// the entry as kept.
    async fn add(
        &self,
        entry: Entry,
        ttl_ms: Option<u64>,
        max: usize,
    ) -> Result<Entry, ControlError>;

    /// Removes entry `id` from list `kind`; whether it was there.
    async fn remove(&self, kind: Kind, id: u64) -> Result<bool, ControlError>;

    /// Tells the fleet that `caller`'s buckets were reset.
    async fn announce_reset(&self, caller: Identity) -> Result<(), ControlError>;

    /// The state, unless its version is `known`.
    async fn read(&self, known: Option<u64>) -> Result<Read, ControlError>;
}
