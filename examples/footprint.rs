//! Memory per bucket: puts N distinct identities (default 1,000,000) through the memory store
//! and reports the process's resident memory before and after; with a Redis URL, also writes
//! N/10 buckets through the Lua script and reports Redis's memory per key.
//! usage: footprint [N] [redis://HOST:PORT]

use floodgate::identity::{Identity, IdentityKey};
use floodgate::limiter::driver::BreakerSettings;
use floodgate::limiter::{
    BucketKey, BucketSpec, FleetSize, MemoryStore, Mode, OnError, PolicyKey, RedisDriver,
    RedisSettings, RedisStore, Take, Terms,
};
use floodgate::telemetry::Metrics;
use std::sync::Arc;
use std::sync::LazyLock;
use std::time::Duration;

static POLICY: LazyLock<PolicyKey> = LazyLock::new(|| PolicyKey::new("per-user"));
const KEY: IdentityKey = IdentityKey::from_bytes([1; 32]);

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

fn take(i: u64) -> Take<'static> {
    Take {
        key: BucketKey {
            policy: &POLICY,
            identity: Identity::of(&KEY, "header:x-api-key", &i.to_le_bytes()),
        },
        spec: BucketSpec::new(10.0, 0.001).expect("a valid bucket"),
        cost: 1.0,
        mode: Mode::Enforce,
        terms: Terms::default(),
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let redis_url = args.next();

    let before = rss_mib();
    let store = MemoryStore::new(n as usize);
    for i in 0..n {
        store.acquire_at(&[take(i)], 1);
    }
    let after = rss_mib();
    println!(
        "memory store: {} buckets held, RSS {:.1} MiB -> {:.1} MiB ({:.1} MiB for {n} identities, {:.0} bytes each)",
        store.len(),
        before,
        after,
        after - before,
        (after - before) * 1024.0 * 1024.0 / n as f64
    );

    let Some(url) = redis_url else { return };
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let settings = RedisSettings {
        url,
        nodes: Vec::new(),
        sentinel: None,
        username: None,
        password: None,
        prefix: "footprint".into(),
        timeout: Duration::from_secs(5),
        on_error: OnError::Deny,
        breaker: BreakerSettings::default(),
        fleet_size: Some(1),
        startup_wait: Duration::from_secs(5),
        lease_for: Duration::ZERO,
        deny_cache_entries: 0,
        ttl_margin: Duration::from_secs(1),
        fallback_max_entries: 1,
        in_flight_lease: Duration::from_secs(5),
    };
    let metrics = Metrics::new();
    let fleet = Arc::new(FleetSize::new(Some(1), metrics.store.fleet_size.clone()));
    let driver = Arc::new(RedisDriver::new(&settings).expect("redis driver"));
    let redis = RedisStore::new(driver, &settings, metrics.store.clone(), None, fleet);
    let keys = n / 10;
    let used = |rt: &tokio::runtime::Runtime| -> f64 {
        let client = redis::Client::open(settings.url.as_str()).expect("client");
        let mut conn = rt
            .block_on(client.get_multiplexed_async_connection())
            .expect("connect");
        let info: String = rt
            .block_on(redis::cmd("INFO").arg("memory").query_async(&mut conn))
            .expect("INFO");
        info.lines()
            .find_map(|l| l.strip_prefix("used_memory:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0.0)
    };
    let before = used(&runtime);
    runtime.block_on(async {
        for i in 0..keys {
            redis.call(&[take(i)]).await.expect("script call");
        }
    });
    let after = used(&runtime);
    println!(
        "redis store: {keys} identity-policy keys, used_memory +{:.1} MiB, {:.0} bytes per key",
        (after - before) / 1024.0 / 1024.0,
        (after - before) / keys as f64
    );
}
