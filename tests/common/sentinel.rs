//! A Redis master, one replica and three `redis-server --sentinel` processes on free loopback
//! ports, with `down-after-milliseconds 1000` and a writable config each (Sentinel rewrites
//! it). Everything is killed when dropped.

use super::free_port;
use super::redis::RedisServer;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The name the sentinels monitor the master by.
pub const MASTER: &str = "mymaster";

/// A monitored master, its replica and three sentinels.
pub struct SentinelSetup {
    pub master: RedisServer,
    pub replica: RedisServer,
    sentinels: Vec<(Child, u16)>,
    _dir: tempfile::TempDir,
}

impl SentinelSetup {
    /// Starts everything and waits until every sentinel knows the replica and the others.
    pub fn start() -> Self {
        // The replica syncs at once (diskless sync waits 5 s by default), as a running one has.
        let master = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
        let port = master.port.to_string();
        let replica = RedisServer::start_with(&["--replicaof", "127.0.0.1", &port]);
        let dir = tempfile::tempdir().expect("temp dir");
        let sentinels = (0..3)
            .map(|i| {
                let port = free_port();
                let conf = dir.path().join(format!("sentinel-{i}.conf"));
                let text = format!(
                    "port {port}\nbind 127.0.0.1\ndir {}\n\
                     sentinel monitor {MASTER} 127.0.0.1 {} 2\n\
                     sentinel down-after-milliseconds {MASTER} 1000\n\
                     sentinel failover-timeout {MASTER} 5000\n\
                     sentinel parallel-syncs {MASTER} 1\n",
                    dir.path().display(),
                    master.port
                );
                std::fs::write(&conf, text).expect("sentinel config");
                let child = Command::new("redis-server")
                    .arg(&conf)
                    .arg("--sentinel")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .expect("spawn redis-server --sentinel");
                (child, port)
            })
            .collect();
        let setup = Self {
            master,
            replica,
            sentinels,
            _dir: dir,
        };
        setup.wait_settled();
        setup
    }

    /// `redis://` URLs of the sentinels.
    pub fn urls(&self) -> Vec<String> {
        self.sentinels
            .iter()
            .map(|(_, port)| format!("redis://127.0.0.1:{port}"))
            .collect()
    }

    /// A connection to sentinel `i`.
    pub fn sentinel(&self, i: usize) -> redis::Connection {
        redis::Client::open(format!("redis://127.0.0.1:{}", self.sentinels[i].1))
            .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(2)))
            .expect("connect to a sentinel")
    }

    /// The port of the master the sentinels name now.
    pub fn master_port(&self) -> Option<u16> {
        let mut conn = self.sentinel(0);
        let address: Option<(String, u16)> = redis::cmd("SENTINEL")
            .arg("get-master-addr-by-name")
            .arg(MASTER)
            .query(&mut conn)
            .ok()?;
        address.map(|(_, port)| port)
    }

    /// Waits until the replica is in sync and each sentinel sees it and the two others.
    fn wait_settled(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let synced = || {
            redis::cmd("INFO")
                .arg("replication")
                .query::<String>(&mut self.replica.conn())
                .is_ok_and(|info| info.contains("master_link_status:up"))
        };
        while !synced() {
            assert!(Instant::now() < deadline, "the replica never synced");
            std::thread::sleep(Duration::from_millis(50));
        }
        let settled = |i: usize| -> bool {
            let Ok(mut conn) =
                redis::Client::open(format!("redis://127.0.0.1:{}", self.sentinels[i].1))
                    .and_then(|c| c.get_connection_with_timeout(Duration::from_millis(500)))
            else {
                return false;
            };
            let info: Vec<(String, String)> = redis::cmd("SENTINEL")
                .arg("master")
                .arg(MASTER)
                .query::<Vec<String>>(&mut conn)
                .map(|flat| {
                    flat.chunks(2)
                        .filter_map(|kv| Some((kv.first()?.clone(), kv.get(1)?.clone())))
                        .collect()
                })
                .unwrap_or_default();
            let field = |name: &str| {
                info.iter()
                    .find(|(k, _)| k == name)
                    .and_then(|(_, v)| v.parse::<u32>().ok())
                    .unwrap_or(0)
            };
            field("num-slaves") >= 1 && field("num-other-sentinels") >= 2
        };
        while Instant::now() < deadline {
            if (0..self.sentinels.len()).all(settled) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("the sentinels did not settle within 30 s");
    }
}

impl Drop for SentinelSetup {
    fn drop(&mut self) {
        for (child, _) in &mut self.sentinels {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
