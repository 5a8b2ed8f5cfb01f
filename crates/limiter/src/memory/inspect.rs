//! The memory store read and reset from outside the request path: an operator's inspect and
//! reset calls, under the same shard locks the takes use.

use super::{shard_index, MemoryStore};
use crate::bucket::{LeasedState, OnLease};
use crate::{BucketKey, BucketSpec, Peek};

impl MemoryStore {
    /// How `key`'s bucket of shape `spec` stands at `now_us`.
    pub fn peek_at(&self, key: BucketKey<'_>, spec: BucketSpec, now_us: u64) -> Peek {
        let id = key.id();
        let stored = self.shards[shard_index(&id, self.shards.len())]
            .lock()
            .get(&id)
            .map(|bucket| LeasedState {
                bucket,
                on_lease: OnLease::default(),
            });
        Peek::of(&spec, stored, now_us)
    }

    /// Forgets the buckets `keys`: full and unblocked again.
    pub fn reset_now(&self, keys: &[BucketKey<'_>]) {
        for key in keys {
            let id = key.id();
            self.shards[shard_index(&id, self.shards.len())]
                .lock()
                .remove(&id);
        }
    }

    /// How `key`'s bucket stands now.
    pub fn peek_now(&self, key: BucketKey<'_>, spec: BucketSpec) -> Peek {
        self.peek_at(key, spec, self.clock.now_us())
    }
}
