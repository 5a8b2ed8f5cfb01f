//! `store.on_error`: what decides a request when the shared store cannot.

use crate::{Assessments, BucketKey, FleetSize, LocalShare, Slot, Take};
use std::sync::Arc;

/// The configured answer to a store failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnError {
    /// Let the request through (fail open), counted as `error`.
    Allow,
    /// Refuse it with 503 and a problem body.
    Deny,
    /// Decide it with in-memory buckets of the same policies on this instance.
    Local,
}

impl OnError {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            OnError::Allow => "allow",
            OnError::Deny => "deny",
            OnError::Local => "local",
        }
    }
}

/// What decides when the store cannot. Cheap to clone; the local buckets are shared, so they
/// outlive config reloads.
#[derive(Clone)]
pub enum Fallback {
    /// Let the request through without a decision.
    Allow,
    /// Refuse it without a decision.
    Deny,
    /// Decide it with this instance's share of each bucket, in memory.
    Local(Arc<LocalShare>),
}

/// What the fallback says when no bucket decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undecided {
    /// Forward the request.
    Pass,
    /// Refuse the request.
    Refuse,
}

impl Fallback {
    /// The fallback `on_error` asks for; `"local"` keeps at most about `max_entries` local
    /// buckets, each this instance's share of `fleet`.
    pub fn new(on_error: OnError, max_entries: usize, fleet: Arc<FleetSize>) -> Self {
        match on_error {
            OnError::Allow => Fallback::Allow,
            OnError::Deny => Fallback::Deny,
            OnError::Local => Fallback::Local(Arc::new(LocalShare::new(max_entries, fleet))),
        }
    }

    /// The local buckets the store's answers should be mirrored into, if any.
    pub fn mirror(&self) -> Option<Arc<LocalShare>> {
        match self {
            Fallback::Local(share) => Some(share.clone()),
            Fallback::Allow | Fallback::Deny => None,
        }
    }

    /// The local buckets' answer for `takes`, or what to do without one.
    pub fn decide(&self, takes: &[Take<'_>]) -> Result<Assessments, Undecided> {
        match self {
            Fallback::Local(share) => Ok(share.acquire(takes)),
            Fallback::Allow => Err(Undecided::Pass),
            Fallback::Deny => Err(Undecided::Refuse),
        }
    }

    /// A concurrency slot of `key` from the local share, or what to do without one.
    pub fn slot(&self, key: BucketKey<'_>, limit: u32) -> Result<Option<Slot>, Undecided> {
        match self {
            Fallback::Local(share) => Ok(share.acquire_slot(key, limit)),
            Fallback::Allow => Err(Undecided::Pass),
            Fallback::Deny => Err(Undecided::Refuse),
        }
    }

    /// Whether nothing can be decided without the store (so `/readyz` fails while it is down).
    pub fn needs_store(&self) -> bool {
        matches!(self, Fallback::Deny)
    }
}
