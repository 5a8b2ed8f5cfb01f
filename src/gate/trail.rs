//! What a decision leaves behind to explain it: the policies a request met, in the order the
//! gate checked them, each with what it made of the request and what its bucket had left.
//! Every entry is written where the policy's decision is counted (one call does both), so the
//! trail and the metrics cannot disagree. A few entries are kept inline, without allocating.

use crate::telemetry::{Decision, PolicyCounters};
use smallvec::SmallVec;
use std::sync::Arc;

/// One policy a request met and what it made of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Checked<'g> {
    /// The policy's name (a rate limit service limit's name at that front door).
    pub policy: &'g Arc<str>,
    /// What the policy made of the request (the `decision` label it was counted under).
    pub decision: Decision,
    /// Tokens its bucket had left after the request; `None` where no bucket answered (a
    /// `deny`, `allow` or `challenge` policy, a refusal before the store, a store that
    /// could not decide).
    pub remaining: Option<f64>,
}

/// The policies a request met, in the order they were checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trail<'g>(SmallVec<[Checked<'g>; 4]>);

impl<'g> Trail<'g> {
    /// Counts `decision` in `counters` and notes it for `policy`, with what its bucket had
    /// `remaining`.
    pub(super) fn note(
        &mut self,
        counters: &PolicyCounters,
        policy: &'g Arc<str>,
        decision: Decision,
        remaining: Option<f64>,
    ) {
        counters.count(decision);
        self.0.push(Checked {
            policy,
            decision,
            remaining,
        });
    }

    /// The entries, in order.
    pub fn checked(&self) -> &[Checked<'g>] {
        &self.0
    }

    /// Whether no policy was checked.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
