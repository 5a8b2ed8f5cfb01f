//! A real Redis Cluster on loopback: masters and replicas as separate redis-server processes,
//! joined with `redis-cli --cluster create`. Every process is killed when dropped.

use super::free_port;
use super::redis::RedisServer;
use std::process::Command;
use std::time::{Duration, Instant};

pub struct RedisCluster {
    pub nodes: Vec<RedisServer>,
}

impl RedisCluster {
    /// `masters` masters with `replicas` replicas each, node timeout 1 s (fast failover).
    pub fn start(masters: usize, replicas: usize) -> Self {
        let nodes: Vec<RedisServer> = (0..masters * (1 + replicas))
            .map(|_| {
                let bus = free_port().to_string();
                RedisServer::start_with(&[
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-node-timeout",
                    "1000",
                    "--cluster-port",
                    &bus,
                    // Fail over even if the replica lost its master long ago, and start
                    // replication at once: a test cluster has no time to spare.
                    "--cluster-replica-validity-factor",
                    "0",
                    "--repl-diskless-sync-delay",
                    "0",
                ])
            })
            .collect();
        let mut create = Command::new("redis-cli");
        create.arg("--cluster").arg("create");
        for node in &nodes {
            create.arg(format!("127.0.0.1:{}", node.port));
        }
        let out = create
            .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
            .output()
            .expect("redis-cli (package redis-tools)");
        assert!(
            out.status.success(),
            "cluster create: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let cluster = RedisCluster { nodes };
        cluster.wait_ok(Duration::from_secs(30));
        cluster
    }

    /// Seed URLs of every node.
    pub fn seeds(&self) -> Vec<String> {
        self.nodes.iter().map(|n| n.url()).collect()
    }

    /// `command arg` on `node`, if it answers.
    fn ask(node: &RedisServer, command: &str, arg: &str) -> Option<String> {
        let client = redis::Client::open(node.url()).ok()?;
        let mut conn = client
            .get_connection_with_timeout(Duration::from_millis(300))
            .ok()?;
        redis::cmd(command).arg(arg).query::<String>(&mut conn).ok()
    }

    /// Whether `node` answers and is a master.
    pub fn is_master(node: &RedisServer) -> bool {
        Self::ask(node, "INFO", "replication").is_some_and(|i| i.contains("role:master"))
    }

    /// Indices of the nodes that are masters now.
    pub fn masters(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| Self::is_master(&self.nodes[i]))
            .collect()
    }

    /// Waits until every live node says `cluster_state:ok` and every master is known.
    pub fn wait_ok(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            let states: Vec<Option<String>> = self
                .nodes
                .iter()
                .map(|n| Self::ask(n, "CLUSTER", "INFO"))
                .collect();
            let live: Vec<&String> = states.iter().flatten().collect();
            if !live.is_empty() && live.iter().all(|s| s.contains("cluster_state:ok")) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the cluster never became ok: {states:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// How many bucket keys (`floodgate:{…}:…`) node `i` holds: its keys, less the fleet's
    /// membership set.
    pub fn buckets(&self, i: usize) -> u64 {
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(super::redis::BUCKET_KEYS)
            .query(&mut self.nodes[i].conn())
            .unwrap_or_default();
        keys.len() as u64
    }
}
