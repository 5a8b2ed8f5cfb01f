//! Where the control state is kept: the narrow interface of the memory ledger (this process,
//! and a state file) and the Redis ledger (one state for the fleet). A ledger numbers its
//! changes with versions and hands a reader what changed since the version it knows, so a
//! change costs what it changes, not the whole state.

use super::change::Change;
use super::entry::{Contents, Entry, Kind};
use crate::identity::Identity;
use async_trait::async_trait;

/// Why a change was not made, or may not have been.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    /// The list holds its maximum already: nothing changed.
    #[error("{} {}s are held, the most `admin.max_{}s` allows; delete some or raise it", .max, .kind.word(), .kind.word())]
    Full {
        /// The list.
        kind: Kind,
        /// Its bound.
        max: usize,
    },
    /// The store could not be asked (Redis down, the breaker open): nothing changed.
    #[error("the control state cannot be changed now: {0}")]
    Unavailable(String),
    /// The store was asked and did not answer: the change may have been made or not.
    #[error("the store did not confirm the change ({0}): it may have been made")]
    Unknown(String),
    /// A read of the control state failed (Redis down or slow): nothing changed, and what
    /// was read before stays in force.
    #[error("the control state cannot be read now: {0}")]
    Unreadable(String),
}

impl ControlError {
    /// The same failure met by a read, which changes nothing: an `Unknown` or `Unavailable`
    /// store call said as a read's.
    pub fn of_read(self) -> Self {
        match self {
            ControlError::Unavailable(why) | ControlError::Unknown(why) => {
                ControlError::Unreadable(why)
            }
            other => other,
        }
    }
}

/// What an add did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    /// The entry was added, as kept.
    Created(Entry),
    /// Nothing changed: a ban on the same target stands already, or the call's idempotency
    /// key made this entry before.
    Existing(Entry),
    /// Nothing changed: the call's idempotency key made entry `id` before, removed since.
    Replayed(u64),
}

/// What a read of the ledger found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    /// Nothing changed since the version the reader knows.
    Unchanged,
    /// The changes after the version the reader knows, oldest first.
    Changes {
        /// The version they lead to.
        version: u64,
        /// What changed.
        changes: Vec<Change>,
        /// Whether later changes are waiting (read again at once).
        more: bool,
    },
    /// The whole state (the reader knew no version, or one too old to catch up from).
    Whole {
        /// The state's version.
        version: u64,
        /// Every entry.
        contents: Contents,
    },
}

/// A place the control state is kept.
#[async_trait]
pub trait Ledger: Send + Sync {
    /// Numbers and adds `entry`, ending `ttl_ms` from now (never for `None`), unless its list
    /// holds `max` entries or a ban on the same target stands; an override replaces one on the
    /// same policy and caller. A call with idempotency `key` that made a change before changes
    /// nothing again.
    async fn add(
        &self,
        entry: Entry,
        ttl_ms: Option<u64>,
        max: usize,
        key: Option<&str>,
    ) -> Result<Added, ControlError>;

    /// Removes entry `id` from list `kind`; whether it was there (or `key` removed it before).
    async fn remove(&self, kind: Kind, id: u64, key: Option<&str>) -> Result<bool, ControlError>;

    /// Tells the fleet that `caller`'s buckets were reset.
    async fn announce_reset(&self, caller: Identity) -> Result<(), ControlError>;

    /// The entry an add with idempotency `key` made, if one did (how an unknown outcome is
    /// settled).
    async fn made_under(&self, key: &str) -> Result<Option<u64>, ControlError>;

    /// What changed since version `known` (the whole state for `None`).
    async fn read(&self, known: Option<u64>) -> Result<Read, ControlError>;
}
