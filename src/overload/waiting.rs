//! A request asking for one of a pool's slots, and waiting in line for it: it leaves the line
//! (or gives back a slot handed over meanwhile) if the request ends while it waits.

use super::pool::{Permit, PoolGuard};
use super::slots::{Asked, Refusal};
use crate::policy::Priority;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

impl PoolGuard {
    /// A slot for a request of `priority`: at once, or after waiting in line for at most
    /// `queue_time`.
    pub async fn acquire(self: &Arc<Self>, priority: Priority) -> Result<Permit, Refusal> {
        let (asked, queue_time) = self.ask(priority);
        match asked {
            Asked::Granted => Ok(self.permit()),
            Asked::Refused(refusal) => Err(refusal),
            Asked::Waiting(id, hear) => Waiting::new(self.clone(), id, hear).wait(queue_time).await,
        }
    }
}

/// A request waiting in line; leaving the line (or giving back a slot handed over
/// meanwhile) if the request ends while it waits.
pub(super) struct Waiting {
    pool: Arc<PoolGuard>,
    id: u64,
    hear: Option<oneshot::Receiver<bool>>,
}

impl Waiting {
    /// Waiter `id` of `pool`, told of its slot through `hear`.
    pub(super) fn new(pool: Arc<PoolGuard>, id: u64, hear: oneshot::Receiver<bool>) -> Self {
        Self {
            pool,
            id,
            hear: Some(hear),
        }
    }

    /// A slot within `queue_time`, or why not.
    pub(super) async fn wait(mut self, queue_time: Duration) -> Result<Permit, Refusal> {
        let Some(hear) = self.hear.as_mut() else {
            return Err(Refusal::Waited);
        };
        let heard = tokio::time::timeout(queue_time, hear).await;
        let outcome = match heard {
            Ok(Ok(true)) => Ok(self.pool.permit()),
            Ok(Ok(false) | Err(_)) => Err(Refusal::Displaced),
            Err(_) => self.timed_out(),
        };
        self.hear = None;
        outcome
    }

    /// Out of line after `queue_time`, unless a slot (or a refusal) came meanwhile.
    fn timed_out(&mut self) -> Result<Permit, Refusal> {
        let left = {
            let mut state = self.pool.state.lock();
            let left = state.slots.leave(self.id);
            self.pool.show(&state);
            left
        };
        if left {
            return Err(Refusal::Waited);
        }
        match self.hear.as_mut().map(|h| h.try_recv()) {
            Some(Ok(true)) => Ok(self.pool.permit()),
            _ => Err(Refusal::Displaced),
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let Some(mut hear) = self.hear.take() else {
            return;
        };
        let mut state = self.pool.state.lock();
        if !state.slots.leave(self.id) && hear.try_recv() == Ok(true) {
            state.slots.release();
        }
        self.pool.show(&state);
    }
}
