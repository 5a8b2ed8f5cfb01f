//! The Lua scripts, compiled into the binary, with their SHA1 for EVALSHA.

use redis::Cmd;

/// `lua/take.lua`: the all-or-nothing take (its header is the contract).
pub const TAKE_SCRIPT: &str = include_str!("../../../../lua/take.lua");

/// `lua/fleet.lua`: announce this instance and count the live ones.
pub const FLEET_SCRIPT: &str = include_str!("../../../../lua/fleet.lua");

/// `lua/inflight.lua`: concurrency slots as leases.
pub const INFLIGHT_SCRIPT: &str = include_str!("../../../../lua/inflight.lua");

/// `lua/peek.lua`: one bucket and Redis's clock, read together.
pub const PEEK_SCRIPT: &str = include_str!("../../../../lua/peek.lua");

/// A script and its hash.
pub(crate) struct Script {
    code: &'static str,
    hash: String,
}

impl Script {
    pub(crate) fn new(code: &'static str) -> Self {
        Self {
            code,
            hash: redis::Script::new(code).get_hash().to_owned(),
        }
    }

    /// The SHA1 EVALSHA names the script by.
    pub(crate) fn hash(&self) -> &str {
        &self.hash
    }

    /// `SCRIPT LOAD` (sent to every master of a Cluster).
    pub(crate) fn load_command(&self) -> Cmd {
        let mut cmd = redis::cmd("SCRIPT");
        cmd.arg("LOAD").arg(self.code);
        cmd
    }
}
