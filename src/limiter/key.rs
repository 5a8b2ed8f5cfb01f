//! Which bucket a take draws on: one policy's bucket of one caller. Both stores name buckets
//! by this pair; the memory store hashes it, the Redis store spells it out.

use crate::identity::Identity;
use std::sync::Arc;

/// A policy as the stores know it: its name, and a number derived from the name once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyKey {
    name: Arc<str>,
    id: u64,
}

impl PolicyKey {
    /// The key of the policy called `name`. The number depends on the name only, so buckets
    /// survive reordering the config and reloads.
    pub fn new(name: &str) -> Self {
        let digest = blake3::hash(name.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest.as_bytes()[..8]);
        Self {
            name: name.into(),
            id: u64::from_le_bytes(first),
        }
    }

    /// The policy's name (part of Redis keys).
    pub fn name(&self) -> &Arc<str> {
        &self.name
    }

    /// A uniformly spread number for the policy (part of in-memory keys).
    pub fn id(&self) -> u64 {
        self.id
    }
}

/// One bucket: `policy`'s bucket of the caller `identity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BucketKey<'a> {
    /// The policy the bucket belongs to.
    pub policy: &'a PolicyKey,
    /// The caller the bucket belongs to.
    pub identity: Identity,
}

impl BucketKey<'_> {
    /// A 64-bit hash of the pair: the identity is already a keyed digest, so its bits serve.
    pub fn hash64(&self) -> u64 {
        self.identity.prefix_u64() ^ self.policy.id
    }
}
