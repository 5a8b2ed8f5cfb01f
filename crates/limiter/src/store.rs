//! The narrow interface every store implements ([`Limiter`]), and why a store cannot decide.

use crate::identity::Identity;
use crate::metrics::StoreErrorKind;
use crate::{Assessments, BucketKey, BucketSpec, Peek, Take};
use async_trait::async_trait;

/// Why a store could not decide.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimiterError {
    /// The store did not answer within its time budget.
    #[error("the store did not answer in time")]
    Timeout,
    /// The store answered with an error or could not be reached.
    #[error("the store failed: {0}")]
    Store(String),
    /// The circuit breaker is open: the store was not asked.
    #[error("the store's circuit breaker is open")]
    BreakerOpen,
    /// No connection to the store could be had: nothing was sent.
    #[error("the store cannot be reached: {0}")]
    Unreachable(String),
}

impl LimiterError {
    /// The `kind` label of `floodgate_store_errors_total`.
    pub fn kind(&self) -> StoreErrorKind {
        match self {
            LimiterError::Timeout => StoreErrorKind::Timeout,
            LimiterError::Store(_) | LimiterError::Unreachable(_) => StoreErrorKind::Unavailable,
            LimiterError::BreakerOpen => StoreErrorKind::BreakerOpen,
        }
    }
}

/// Whether a store can decide right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// It answers.
    Ready,
    /// It does not; the reason says why.
    Down(String),
}

/// A store of token buckets.
#[async_trait]
pub trait Limiter: Send + Sync {
    /// Takes `cost` from every enforcing bucket in `takes` if each holds enough, or from
    /// none; each shadow bucket pays on its own when it can. Returns one assessment per take,
    /// in order; the request passes when every enforcing take is allowed.
    async fn acquire(&self, takes: &[Take<'_>]) -> Result<Assessments, LimiterError>;

    /// [`Limiter::acquire`]'s answer when the store has it at hand, without waiting on
    /// anything (`None`: ask `acquire`). The memory store always has: its answer then costs no
    /// boxed future, which `acquire` allocates on every call.
    fn acquire_at_hand(&self, _takes: &[Take<'_>]) -> Option<Result<Assessments, LimiterError>> {
        None
    }

    /// How the bucket `key` of shape `spec` stands now, nothing taken.
    async fn peek(&self, key: BucketKey<'_>, spec: BucketSpec) -> Result<Peek, LimiterError>;

    /// Forgets the buckets `keys` (all of one caller): each is full and unblocked again.
    async fn reset(&self, keys: &[BucketKey<'_>]) -> Result<(), LimiterError>;

    /// Drops what this instance remembers of `identity`'s refusals (its buckets were reset
    /// elsewhere in the fleet). Stores that remember nothing do nothing.
    fn forget(&self, _identity: &Identity) {}

    /// Whether the store can decide now (checked by `/readyz`).
    async fn health(&self) -> Health {
        Health::Ready
    }
}
