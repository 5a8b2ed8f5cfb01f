//! Which bucket a take draws on: one policy's bucket of one caller. Both stores name buckets
//! by this pair; the memory store and the Redis store's leases hash it, Redis keys spell it out.

use crate::identity::Identity;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
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
    /// The bucket named without borrowing its policy, to keep in a [`BucketMap`].
    pub fn id(&self) -> BucketId {
        BucketId {
            policy_id: self.policy.id,
            identity: self.identity,
        }
    }
}

/// One bucket, by the policy's number and the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BucketId {
    /// The policy's number ([`PolicyKey::id`]).
    pub policy_id: u64,
    /// The caller.
    pub identity: Identity,
}

impl BucketId {
    /// A 64-bit hash of the pair: the identity is already a keyed digest, so its bits serve.
    pub fn hash64(&self) -> u64 {
        self.identity.prefix_u64() ^ self.policy_id
    }
}

impl Hash for BucketId {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash64());
    }
}

/// A map keyed by bucket that uses [`BucketId::hash64`] as it is: the identity is a digest
/// under a key callers never see, so they cannot choose colliding keys, and a second hash
/// would only cost time.
pub type BucketMap<V> = HashMap<BucketId, V, BuildHasherDefault<PrehashedHasher>>;

/// Passes a precomputed 64-bit hash through instead of hashing it again.
#[derive(Default)]
pub struct PrehashedHasher(u64);

impl Hasher for PrehashedHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}
