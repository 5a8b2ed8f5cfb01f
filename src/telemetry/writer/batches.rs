//! The draining end of a [`Writer`](super::Writer): its items in batches, each the items
//! waiting and those that come within the writer's linger, up to its batch size. A batch
//! counts as written once the drain lets go of it. Drained by a task of its own
//! ([`Batches::next`]) or by a thread ([`Batches::drain_on_thread`]).

use super::losses::Cause;
use super::{Bounds, Shared};
use std::ops::{Deref, DerefMut};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::runtime::Runtime;
use tokio::sync::mpsc::Receiver;

/// A writer's items, a batch at a time.
#[derive(Debug)]
pub struct Batches<T> {
    queue: Receiver<T>,
    bounds: Bounds,
    shared: Arc<Shared>,
    /// The batch under way (kept, allocation and all, from one batch to the next).
    items: Vec<T>,
}

/// Items to write. They count as written when it is dropped.
#[derive(Debug)]
pub struct Batch<'b, T> {
    items: &'b mut Vec<T>,
    shared: &'b Shared,
    /// How many items it was handed with.
    taken: usize,
}

impl<T: Send + 'static> Batches<T> {
    pub(super) fn new(queue: Receiver<T>, bounds: Bounds, shared: Arc<Shared>) -> Self {
        Self {
            queue,
            bounds,
            shared,
            items: Vec::with_capacity(bounds.batch),
        }
    }

    /// The next batch: the items waiting, at least one, and (with a linger) those that come
    /// until it has passed or the batch is full; `None` once every sender is gone and nothing
    /// waits. Cancel-safe: items gathered by a call dropped midway start the next batch.
    pub async fn next(&mut self) -> Option<Batch<'_, T>> {
        let most = self.bounds.batch;
        if self.items.is_empty() && self.queue.recv_many(&mut self.items, most).await == 0 {
            return None;
        }
        if !self.bounds.linger.is_zero() {
            self.gather().await;
        }
        let taken = self.items.len();
        Some(Batch {
            items: &mut self.items,
            shared: &self.shared,
            taken,
        })
    }

    /// Adds the items that come within the linger, up to the batch size.
    async fn gather(&mut self) {
        let linger = tokio::time::sleep(self.bounds.linger);
        tokio::pin!(linger);
        while self.items.len() < self.bounds.batch {
            let room = self.bounds.batch - self.items.len();
            tokio::select! {
                biased;
                n = self.queue.recv_many(&mut self.items, room) => {
                    if n == 0 {
                        return;
                    }
                }
                () = &mut linger => return,
            }
        }
    }

    /// Drains the batches on a thread named `name`, with the drain `make` returns (made on that
    /// thread, so what may not be made on an async runtime's worker can be). The thread ends
    /// when every sender is gone and the last batch is written.
    pub fn drain_on_thread<D, M>(self, name: &str, make: M) -> std::io::Result<()>
    where
        D: FnMut(&mut Batch<'_, T>),
        M: FnOnce() -> D + Send + 'static,
    {
        // The linger's timer; the drain runs outside it (not on a runtime).
        let timer = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()?;
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || self.drain_with(&timer, make()))?;
        Ok(())
    }

    fn drain_with(mut self, timer: &Runtime, mut drain: impl FnMut(&mut Batch<'_, T>)) {
        while let Some(mut batch) = timer.block_on(self.next()) {
            drain(&mut batch);
        }
    }
}

impl<T> Batch<'_, T> {
    /// Counts `count` of its items (or of what they made) as lost for `cause`, warned about
    /// at most once a minute.
    pub fn lost(&self, count: u64, cause: Cause<'_>) {
        self.shared.losses.lose(count, cause);
    }
}

impl<T> Deref for Batch<'_, T> {
    type Target = Vec<T>;

    fn deref(&self) -> &Vec<T> {
        self.items
    }
}

impl<T> DerefMut for Batch<'_, T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        self.items
    }
}

impl<T> Drop for Batch<'_, T> {
    fn drop(&mut self) {
        self.items.clear();
        self.shared
            .unwritten
            .fetch_sub(self.taken, Ordering::AcqRel);
    }
}
