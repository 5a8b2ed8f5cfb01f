//! The Redis store on a real Redis Cluster (3 masters, 1 replica each): limits hold across
//! proxies, identities spread over every master, and a master's death is survived.

use crate::common;

use common::cluster::RedisCluster;
use common::load::{assert_exact_bucket, hammer};
use common::{Proxy, Upstream};
use std::time::{Duration, Instant};

fn cluster_store(cluster: &RedisCluster, settings: &str) -> String {
    let nodes: Vec<String> = cluster.seeds().iter().map(|s| format!("\"{s}\"")).collect();
    format!(
        "[store]\nkind = \"redis\"\nnodes = [{}]\n{settings}\n",
        nodes.join(", ")
    )
}

fn keyed_policy(capacity: u64, rate: &str) -> String {
    format!("[identity]\nsources = [\"header:x-api-key\"]\n\n[[policy]]\nname = \"p\"\ncapacity = {capacity}\nrate = \"{rate}\"\n")
}

/// Redis's clock on the first node, in seconds.
fn redis_time(cluster: &RedisCluster) -> f64 {
    let (s, us): (u64, u64) = redis::cmd("TIME")
        .query(&mut cluster.nodes[0].conn())
        .expect("TIME");
    s as f64 + us as f64 / 1e6
}

#[test]
fn three_proxies_on_a_cluster_admit_what_the_exact_bucket_allows() {
    let cluster = RedisCluster::start(3, 1);
    let upstream = Upstream::start();
    let config = cluster_store(&cluster, "") + &keyed_policy(20, "50/s");
    let proxies: Vec<Proxy> = (0..3)
        .map(|_| Proxy::start(&[&upstream.addr], &config))
        .collect();
    let urls: Vec<String> = proxies.iter().map(|p| p.url("/")).collect();
    // Connect every proxy to the cluster before the clock starts.
    for p in &proxies {
        assert_eq!(p.get("/", &[("x-api-key", "warm-up")]).status(), 200);
    }
    let started = redis_time(&cluster);
    let report = hammer(
        &urls,
        2,
        Duration::from_secs(3),
        Duration::ZERO,
        &[("x-api-key", "flood")],
    );
    let elapsed = redis_time(&cluster) - started;
    assert_exact_bucket(&report, 20.0, 50.0, elapsed);
}

#[test]
fn identities_spread_over_every_master() {
    let cluster = RedisCluster::start(3, 1);
    let upstream = Upstream::start();
    let config = cluster_store(&cluster, "") + &keyed_policy(5, "1/h");
    let proxy = Proxy::start(&[&upstream.addr], &config);
    for i in 0..60 {
        assert_eq!(
            proxy
                .get("/", &[("x-api-key", &format!("user-{i}"))])
                .status(),
            200
        );
    }
    let masters = cluster.masters();
    assert_eq!(masters.len(), 3);
    let sizes: Vec<u64> = masters.iter().map(|&m| cluster.buckets(m)).collect();
    eprintln!("keys per master: {sizes:?}");
    assert!(sizes.iter().all(|&n| n > 0), "{sizes:?}");
    assert_eq!(sizes.iter().sum::<u64>(), 60, "one bucket per caller");
    assert_eq!(
        proxy.metric("floodgate_store_errors_total{kind=\"unavailable\"}"),
        0.0
    );
}

#[test]
fn a_master_killed_under_traffic_is_survived_and_limiting_resumes_after_failover() {
    let mut cluster = RedisCluster::start(3, 1);
    let upstream = Upstream::start();
    let store = "on_error = \"local\"";
    let config = cluster_store(&cluster, store) + &keyed_policy(100_000, "100000/s");
    let proxy = Proxy::start(&[&upstream.addr], &config);
    let victim = cluster.masters()[0];
    let url = proxy.url("/");
    let report = std::thread::scope(|scope| {
        let load = scope.spawn(|| {
            let urls = [url.clone()];
            let mut all = Vec::new();
            // Many identities, so that some live on the master that dies.
            for i in 0..8 {
                let key = format!("caller-{i}");
                all.push(hammer(
                    &urls,
                    1,
                    Duration::from_millis(700),
                    Duration::from_millis(2),
                    &[("x-api-key", &key)],
                ));
            }
            all
        });
        std::thread::sleep(Duration::from_secs(1));
        cluster.nodes[victim].kill();
        load.join().expect("load")
    });
    let (total, ok): (usize, usize) = report
        .iter()
        .fold((0, 0), |(t, o), r| (t + r.total(), o + r.count(200)));
    let slowest = report
        .iter()
        .map(|r| r.max_latency())
        .max()
        .unwrap_or_default();
    eprintln!("failover: {ok}/{total} answered 200, slowest {slowest:?}");
    assert_eq!(
        ok, total,
        "every request answered (local fallback during the gap)"
    );

    // The replica takes over; new identities then get buckets in Redis again.
    cluster.wait_ok(Duration::from_secs(30));
    let masters = cluster.masters();
    assert_eq!(masters.len(), 3, "a replica was promoted");
    let before: u64 = masters.iter().map(|&m| cluster.buckets(m)).sum();
    let resumed = Instant::now();
    let mut i = 0;
    while masters.iter().map(|&m| cluster.buckets(m)).sum::<u64>() < before + 30 {
        assert!(
            resumed.elapsed() < Duration::from_secs(20),
            "limiting never resumed on the cluster"
        );
        proxy.get("/", &[("x-api-key", &format!("after-{i}"))]);
        i += 1;
    }
    eprintln!(
        "limiting resumed {:?} after the cluster was ok again",
        resumed.elapsed()
    );
}
