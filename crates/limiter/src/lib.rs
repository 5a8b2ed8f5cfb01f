//! Floodgate's limiter: take tokens from every bucket a request needs, all or nothing, in one
//! step. No HTTP and no pingora in here: `cargo test -p floodgate-limiter` tests it alone.
//!
//! [`Limiter`] is the narrow interface every store implements; [`bucket`] is the arithmetic
//! they all follow (`lua/take.lua` mirrors it); [`memory`] and [`redis`] are the stores;
//! [`driver`] is the connection to Redis (standalone, Sentinel or Cluster, the scripts, the
//! breaker) that the Redis store and the rest of the proxy's Redis users share; [`Fallback`]
//! decides when a shared store cannot. What a store needs of the proxy lives here too: the
//! caller's digest ([`Identity`]), the clock and the store's metrics.
#![warn(missing_docs, rust_2018_idioms, unreachable_pub)]
#![forbid(unsafe_code)]

pub mod bucket;
pub mod clock;
pub mod driver;
mod fallback;
mod fleet_size;
mod identity;
mod identity_key;
mod key;
pub mod memory;
mod metrics;
mod once;
mod peek;
pub mod redis;
mod settings;
mod share;
mod slots;
mod store;
mod take;

pub use bucket::{
    Allowed, Assessment, BucketSpec, BucketState, Penalty, Periods, Refill, Refused, SpecError,
    Terms,
};
pub use driver::{fleet_hash_key, reply_text, RedisDriver, RedisSettings};
pub use fallback::{Fallback, OnError, Undecided};
pub use fleet_size::{FleetSize, ANNOUNCE_INTERVAL, MEMBERSHIP_LIFETIME};
pub use identity::Identity;
pub use identity_key::{IdentityKey, IdentityKeyError, MIN_SECRET_LEN};
pub use key::{BucketId, BucketKey, BucketMap, PolicyKey, PrehashedHasher};
pub use memory::MemoryStore;
pub use metrics::{StoreErrorKind, StoreMetrics};
pub use once::{LedgerError, MemoryNonces, NonceLedger, Redeemed, RedisNonces, MAX_REMEMBERED};
pub use peek::Peek;
pub use redis::{RedisSlots, RedisStore};
pub use settings::StoreSettings;
pub use share::LocalShare;
pub use slots::{InFlight, MemorySlots, Slot, SlotId, SlotOwner};
pub use store::{Health, Limiter, LimiterError};
pub use take::{paying, Assessments, Mode, ModeCode, Take};
