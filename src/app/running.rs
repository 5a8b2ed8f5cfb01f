//! A built server run to its end: a graceful shutdown watched (`drain`), so the process
//! ends once nothing is in flight, and the pid file removed as it ends.

use super::drain::Drain;
use super::PidFile;
use pingora::server::{RunArgs, Server};

/// A built server, ready to run, and what ends it once a graceful shutdown has drained.
pub struct App {
    server: Server,
    drain: Drain,
}

impl App {
    /// `server`, ended by `drain`.
    pub(super) fn new(server: Server, drain: Drain) -> Self {
        Self { server, drain }
    }

    /// Serves until a shutdown ends the process; `pid_file` is removed as it ends.
    pub fn run(self, pid_file: PidFile) {
        let phases = self.server.watch_execution_phase();
        let pid_file = self.drain.watch(phases, pid_file);
        self.server.run(RunArgs::default());
        drop(pid_file.lock().take());
    }
}
