//! The Lua scripts, compiled into the binary, with their SHA1 for EVALSHA, and the one way a
//! script is run: by EVALSHA, loading it again when Redis no longer holds it.

use super::connection::Conn;
use redis::{Cmd, ErrorKind, FromRedisValue, RedisResult, ServerErrorKind};

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

    /// An EVALSHA of this script on `keys` with `args`.
    pub(crate) fn evalsha<K: redis::ToRedisArgs, A: redis::ToRedisArgs>(
        &self,
        keys: &[K],
        args: A,
    ) -> Cmd {
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(&self.hash).arg(keys.len()).arg(keys).arg(args);
        cmd
    }

    /// Runs `evalsha` (an EVALSHA of this script) on `conn`; when Redis no longer holds the
    /// script (a restart, a failover, `SCRIPT FLUSH`), loads it and runs it once more.
    pub(crate) async fn run_on<T: FromRedisValue>(
        &self,
        evalsha: &Cmd,
        conn: &mut Conn,
    ) -> RedisResult<T> {
        match evalsha.query_async::<T>(conn).await {
            Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                self.load_command().query_async::<String>(conn).await?;
                evalsha.query_async(conn).await
            }
            reply => reply,
        }
    }
}
