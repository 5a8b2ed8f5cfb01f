//! The limiter: take tokens from every bucket a request needs, all or nothing, in one step.
//!
//! [`Limiter`] is the narrow interface every store implements; [`bucket`] is the arithmetic
//! they all follow.

pub mod breaker;
pub mod bucket;
mod connection;
pub mod deny_cache;
pub mod memory;
pub mod redis;

pub use bucket::{Assessment, BucketSpec, BucketState};
pub use memory::MemoryStore;
pub use redis::RedisStore;

use crate::identity::Identity;
use async_trait::async_trait;
use smallvec::SmallVec;

/// One assessment per take, in order; a few are kept inline, without allocating.
pub type Assessments = SmallVec<[Assessment; 4]>;

/// One bucket a request takes from: whose, which policy's, what shape, how much.
#[derive(Debug, Clone, Copy)]
pub struct Take<'a> {
    /// A stable number for the policy (derived from its name), part of the bucket's key.
    pub policy_id: u64,
    /// The policy's name, for stores that key buckets by name.
    pub policy_name: &'a str,
    /// The caller the bucket belongs to.
    pub identity: Identity,
    /// The bucket's capacity and refill rate.
    pub spec: BucketSpec,
    /// Tokens this request needs.
    pub cost: f64,
}

/// Why a store could not decide.
#[derive(Debug, thiserror::Error)]
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
}

impl LimiterError {
    /// The `kind` label of `floodgate_store_errors_total`.
    pub fn kind(&self) -> &'static str {
        match self {
            LimiterError::Timeout => "timeout",
            LimiterError::Store(_) => "unavailable",
            LimiterError::BreakerOpen => "breaker_open",
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
    /// Takes `cost` from every bucket in `takes` if each holds enough, or from none.
    /// Returns one assessment per take, in order; the request passes when all are allowed.
    async fn acquire(&self, takes: &[Take<'_>]) -> Result<Assessments, LimiterError>;

    /// Whether the store can decide now (checked by `/readyz`).
    async fn health(&self) -> Health {
        Health::Ready
    }
}
