//! Values used once, fleet-wide: a challenge's nonce, a signed request's nonce. In Redis
//! (`SET {prefix}:once:{scope}:{id} 1 NX PX …`) when the buckets live there, else in this
//! process. A value is remembered as long as it could be presented again; a ledger that cannot
//! answer is an error, which callers take as a refusal (never a pass).

use crate::driver::RedisDriver;
use crate::LimiterError;
use async_trait::async_trait;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

/// How a redemption fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redeemed {
    /// The nonce's first redemption.
    First,
    /// Redeemed before.
    Replayed,
}

/// Why the ledger could not tell.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LedgerError {
    /// Redis failed or did not answer in time.
    #[error(transparent)]
    Store(#[from] LimiterError),
    /// The process holds as many unexpired nonces as it may.
    #[error("{0} nonces are remembered already")]
    Full(usize),
}

/// Where used values are remembered.
#[async_trait]
pub trait NonceLedger: Send + Sync {
    /// Records the use of value `id` of `scope` (`challenge`, `signature`), remembered until
    /// `until_ms` (Unix ms; `now_ms` is now).
    async fn redeem(
        &self,
        scope: &'static str,
        id: &[u8; 16],
        now_ms: u64,
        until_ms: u64,
    ) -> Result<Redeemed, LedgerError>;
}

/// The fleet's ledger, beside the buckets in Redis.
pub struct RedisNonces {
    driver: Arc<RedisDriver>,
}

impl RedisNonces {
    /// The ledger kept under `driver`'s prefix.
    pub fn new(driver: Arc<RedisDriver>) -> Self {
        Self { driver }
    }
}

#[async_trait]
impl NonceLedger for RedisNonces {
    async fn redeem(
        &self,
        scope: &'static str,
        id: &[u8; 16],
        now_ms: u64,
        until_ms: u64,
    ) -> Result<Redeemed, LedgerError> {
        let key = format!("{}:once:{scope}:{}", self.driver.prefix(), hex(id));
        let ttl = until_ms.saturating_sub(now_ms);
        match self.driver.set_once(&key, ttl).await? {
            true => Ok(Redeemed::First),
            false => Ok(Redeemed::Replayed),
        }
    }
}

/// The most nonces one process remembers: a flood of solutions beyond it is refused until
/// some expire.
pub const MAX_REMEMBERED: usize = 1_000_000;

/// One process's ledger (the memory store).
#[derive(Default)]
pub struct MemoryNonces {
    used: Mutex<HashMap<(&'static str, [u8; 16]), u64>>,
}

#[async_trait]
impl NonceLedger for MemoryNonces {
    async fn redeem(
        &self,
        scope: &'static str,
        id: &[u8; 16],
        now_ms: u64,
        until_ms: u64,
    ) -> Result<Redeemed, LedgerError> {
        let mut used = self.used.lock();
        let id = (scope, *id);
        if used.len() >= MAX_REMEMBERED {
            used.retain(|_, until| *until > now_ms);
            if used.len() >= MAX_REMEMBERED {
                return Err(LedgerError::Full(used.len()));
            }
        }
        match used.get(&id) {
            Some(until) if *until > now_ms => Ok(Redeemed::Replayed),
            _ => {
                used.insert(id, until_ms);
                Ok(Redeemed::First)
            }
        }
    }
}

fn hex(id: &[u8; 16]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_value_is_used_once_while_it_is_remembered() {
        let ledger = MemoryNonces::default();
        let id = [1; 16];
        let first = ledger.redeem("t", &id, 0, 100).await.unwrap();
        assert_eq!(first, Redeemed::First);
        let again = ledger.redeem("t", &id, 50, 150).await.unwrap();
        assert_eq!(again, Redeemed::Replayed);
        // Forgotten once it could no longer be presented anyway.
        let later = ledger.redeem("t", &id, 100, 200).await.unwrap();
        assert_eq!(later, Redeemed::First);
        let other = ledger.redeem("u", &[2; 16], 100, 200).await.unwrap();
        assert_eq!(other, Redeemed::First);
        let scoped = ledger.redeem("u", &id, 120, 200).await.unwrap();
        assert_eq!(scoped, Redeemed::First, "scopes are apart");
    }
}
