//! `[store]`: where buckets live, as the config describes it.

use crate::driver::RedisSettings;

/// Where buckets live.
// One per config, never moved around on the request path: the size difference costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum StoreSettings {
    /// Buckets in this process's memory.
    Memory {
        /// Most buckets held at once.
        max_entries: usize,
    },
    /// Buckets in Redis, shared by every instance.
    Redis(RedisSettings),
}
