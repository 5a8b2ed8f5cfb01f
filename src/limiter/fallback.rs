//! `store.on_error`: what decides a request when the shared store cannot.

use super::{Assessments, MemoryStore, Take};
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
    /// Decide it with these in-memory buckets.
    Local(Arc<MemoryStore>),
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
    /// The fallback `on_error` asks for; `local_entries` bounds the local buckets.
    pub fn new(on_error: OnError, local_entries: usize) -> Self {
        match on_error {
            OnError::Allow => Fallback::Allow,
            OnError::Deny => Fallback::Deny,
            OnError::Local => Fallback::Local(Arc::new(MemoryStore::new(local_entries))),
        }
    }

    /// The local buckets' answer for `takes`, or what to do without one.
    pub fn decide(&self, takes: &[Take<'_>]) -> Result<Assessments, Undecided> {
        match self {
            Fallback::Local(memory) => Ok(memory.acquire_now(takes)),
            Fallback::Allow => Err(Undecided::Pass),
            Fallback::Deny => Err(Undecided::Refuse),
        }
    }

    /// Whether nothing can be decided without the store (so `/readyz` fails while it is down).
    pub fn needs_store(&self) -> bool {
        matches!(self, Fallback::Deny)
    }
}
