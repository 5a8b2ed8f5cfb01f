//! Everything that needs real redis-server processes: the Lua scripts against their
//! specification, the proxy on standalone Redis, Cluster and Sentinel, exactness under load,
//! the bad day (chaos), calendar quotas, the control API with its ledger, the overload
//! switch, the robots.txt trap's tables across a fleet and the trap on two instances, and
//! Privacy Pass tokens' spent nonces across a fleet.
//! Tests that load the machine or measure latency hold `common::serial::alone()`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/issuer.rs"]
mod issuer;
#[path = "../common/tokens.rs"]
mod tokens;

mod chaos;
mod cluster;
mod control;
mod decisions;
mod distant;
mod exact_under_load;
mod lease_lua;
mod lua;
mod overload;
mod privacy_pass;
mod proofs;
mod proxy;
mod quota;
mod quota_lua;
mod robots;
mod sentinel;
mod traps;
