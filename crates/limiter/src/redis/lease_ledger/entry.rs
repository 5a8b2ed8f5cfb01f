//! One caller's lease on this instance: what it holds, and how hot the caller is (its requests
//! over the last two periods), which sizes the lease it asks for next.

use super::{Refund, MAX_SHARE};
use crate::identity::Identity;
use crate::{BucketSpec, PolicyKey};

/// A lease this instance holds.
#[derive(Debug, Clone)]
pub(super) struct Held {
    pub(super) policy: PolicyKey,
    pub(super) spec: BucketSpec,
    /// Tokens lent.
    pub(super) size: f64,
    /// The lease window Redis lent them in.
    pub(super) window: u64,
    /// Lent tokens not yet spent.
    pub(super) unspent: f64,
    /// What Redis said the bucket held after lending (for honest headers).
    pub(super) redis_remaining: f64,
    /// When the lease lapses here.
    pub(super) expires_us: u64,
}

#[derive(Debug, Clone, Default)]
pub(super) struct Entry {
    pub(super) held: Option<Held>,
    /// A lease was asked for and has not been answered yet.
    pub(super) pending: bool,
    /// The caller's requests here in the current period and the one before, and when the
    /// current one began.
    pub(super) used_now: u32,
    pub(super) used_before: u32,
    pub(super) period_start_us: u64,
}

impl Entry {
    /// Counts one request of the caller at `now_us`.
    pub(super) fn used(&mut self, now_us: u64, period_us: u64) {
        let since = now_us.saturating_sub(self.period_start_us);
        if since >= period_us {
            self.used_before = if since < 2 * period_us {
                self.used_now
            } else {
                0
            };
            self.used_now = 0;
            self.period_start_us = now_us;
        }
        self.used_now = self.used_now.saturating_add(1);
    }

    /// The size of lease to ask for, if the caller is hot enough for one (and asks now).
    pub(super) fn ask(&mut self, spec: BucketSpec, cost: f64, fleet: u32) -> Option<f64> {
        let demand = f64::from(self.used_now.max(self.used_before)) * cost;
        let cap = spec.capacity() * MAX_SHARE / f64::from(fleet.max(1));
        let size = demand.min(cap).floor();
        self.pending = size >= 2.0 * cost;
        self.pending.then_some(size)
    }

    /// The held lease, taken out to go back to Redis.
    pub(super) fn give_back(&mut self, identity: Identity) -> Option<Refund> {
        let held = self.held.take()?;
        Some(Refund {
            policy: held.policy,
            identity,
            spec: held.spec,
            leased: held.size,
            window: held.window,
            unspent: held.unspent,
        })
    }
}
