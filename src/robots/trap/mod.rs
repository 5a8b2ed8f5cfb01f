//! The robots.txt trap's fleet-wide tables (issue 84, "The trap"): who fetched /robots.txt
//! (`readers`), whom the trap banned (`bans`: a bounded table of its own, oldest first out,
//! IPv6 folded to /48 past a threshold, so it never crowds out the operator's bans), and the
//! trap path kept by the fleet (`path`). On the Redis store the tables are the fleet's
//! (`fleet`, `lua/traps.lua`) and each instance mirrors the bans (`mirror`), so the hot path
//! reads them from memory; on the memory store they are this process's. Everything is kept
//! as keyed digests (`target`): never an address or a credential in Redis or a log.

mod bans;
mod error;
mod fleet;
mod mirror;
mod path;
mod readers;
mod settings;
mod target;
mod traps;

pub use error::TrapError;
pub use fleet::{READ_EVERY, TRAPS_SCRIPT};
pub use path::{random_trap_path, TRAP_PREFIX};
pub use settings::{TrapSettings, DEFAULT_WINDOW};
pub use target::{address_digest, network_digest, TrapBan, TrapScope, TrapTarget};
pub use traps::Traps;

#[cfg(test)]
mod tests;
