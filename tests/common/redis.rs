//! A real `redis-server` on a free loopback port, killed and reaped when dropped.

use super::free_port;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A redis-server process this test started.
pub struct RedisServer {
    child: Option<Child>,
    dir: tempfile::TempDir,
    args: Vec<String>,
    pub port: u16,
}

impl RedisServer {
    /// Starts a server on a free port, retrying with another port if one was taken.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// Like `start`, with extra `redis-server` arguments.
    pub fn start_with(args: &[&str]) -> Self {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let mut dir = tempfile::tempdir().expect("temp dir");
        for _ in 0..3 {
            let mut server = RedisServer {
                child: None,
                dir,
                args: args.clone(),
                port: free_port(),
            };
            if server.launch() {
                return server;
            }
            dir = server.take_dir();
        }
        panic!("redis-server did not start (is it installed? scripts/test installs it)");
    }

    fn take_dir(mut self) -> tempfile::TempDir {
        self.kill();
        std::mem::replace(&mut self.dir, tempfile::tempdir().expect("temp dir"))
    }

    /// Starts the process on `self.port`; true once it answers PING.
    fn launch(&mut self) -> bool {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(self.dir.path())
            .args(&self.args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Some(Ok(Some(_))) = self.child.as_mut().map(|c| c.try_wait()) {
                return false;
            }
            if self.ping() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    fn ping(&self) -> bool {
        redis::Client::open(self.url())
            .and_then(|c| c.get_connection_with_timeout(Duration::from_millis(200)))
            .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c))
            .is_ok()
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// A fresh synchronous connection.
    pub fn conn(&self) -> redis::Connection {
        redis::Client::open(self.url())
            .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(2)))
            .expect("connect to redis")
    }

    /// Kills the process (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port, after `kill`.
    pub fn restart(&mut self) {
        assert!(self.launch(), "redis-server restarts on port {}", self.port);
    }

    /// Calls of the Lua script so far (EVALSHA and EVAL) from `INFO commandstats`.
    pub fn script_calls(&self) -> u64 {
        self.commandstats()
            .lines()
            .filter(|l| l.starts_with("cmdstat_evalsha:") || l.starts_with("cmdstat_eval:"))
            .filter_map(|l| {
                l.split("calls=")
                    .nth(1)?
                    .split(',')
                    .next()?
                    .parse::<u64>()
                    .ok()
            })
            .sum()
    }

    /// `INFO commandstats`, asked again on a connection closed under it for up to 2 s: a
    /// replica Sentinel promotes drops its clients (`CLIENT KILL TYPE normal`) as it does.
    fn commandstats(&self) -> String {
        let started = std::time::Instant::now();
        loop {
            let info = redis::Client::open(self.url())
                .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(2)))
                .and_then(|mut c| redis::cmd("INFO").arg("commandstats").query(&mut c));
            match info {
                Ok(info) => return info,
                Err(e) if started.elapsed() < Duration::from_secs(2) => {
                    eprintln!("INFO commandstats: {e}; asking again");
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(e) => panic!("INFO commandstats: {e}"),
            }
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The pattern of the bucket keys under the default prefix, `floodgate:{<caller's 32 hex
/// digits>}:<policy>`: not the fleet's other keys (`floodgate:{control}:…`,
/// `floodgate:{decisions}:…`, `floodgate:hash_key`).
pub const BUCKET_KEYS: &str = "floodgate:{????????????????????????????????}:*";
