//! A settlement: a reservation corrected after the response (a charge or a refund), never
//! refused. A charge may leave the bucket in debt, to a bounded depth.

use super::{Assessment, BucketSpec, BucketState, Refill, MAX_CAPACITY, MAX_DEBT_SECONDS};

impl BucketSpec {
    /// A settlement of `delta` tokens at `level` (positive charges, negative refunds): never
    /// refused. A charge may leave the bucket in debt, below zero, which refill and later
    /// requests pay off; a refund never fills it past capacity. A block stays as it is. A
    /// quota's settlement applies only in the period its request was admitted in (the middle
    /// one of its [`Periods`](super::Periods)); later it changes nothing.
    pub fn settle(&self, level: BucketState, delta: f64, now_us: u64) -> Assessment {
        self.settled_answer(self.settled(level, delta, now_us), now_us)
    }

    /// The answer to a settlement that left `tokens`.
    pub(super) fn settled_answer(&self, tokens: f64, now_us: u64) -> Assessment {
        let full_in_us = self.micros_to_gain(self.capacity - tokens, now_us);
        Assessment::allowed(tokens, 0, full_in_us)
    }

    /// The state to store after settling `delta` at `level`.
    pub fn after_settle(&self, level: BucketState, delta: f64, now_us: u64) -> BucketState {
        BucketState {
            tokens: self.settled(level, delta, now_us),
            ..level
        }
    }

    /// The tokens after settling `delta` at `level`: at most the capacity, and in debt by at
    /// most ten years of refill (a quota: by at most [`MAX_CAPACITY`]), so every wait the
    /// arithmetic reports stays exact in microseconds.
    pub(super) fn settled(&self, level: BucketState, delta: f64, now_us: u64) -> f64 {
        let deepest = match self.refill {
            Refill::Calendar(periods) if !periods.settles_at(now_us) => return level.tokens,
            Refill::Calendar(_) => -MAX_CAPACITY,
            Refill::Continuous { per_second } => -(per_second * MAX_DEBT_SECONDS),
        };
        (level.tokens - delta).min(self.capacity).max(deepest)
    }
}
