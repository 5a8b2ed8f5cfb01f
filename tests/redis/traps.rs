//! The robots.txt trap's tables across a fleet (`lua/traps.lua`): two `Traps` on one real
//! Redis agree within a second on a ban (the second refreshing every 250 ms as the proxy
//! does), on who read /robots.txt and on the trap path; the script folds IPv6 and pushes the
//! oldest ban out as the memory table does; Redis holds digests only; a Redis that is gone
//! makes `has_read` an error, never a yes.

use crate::common;

use common::difftest::settings;
use common::redis::RedisServer;
use floodgate::identity::{Identity, IdentityKey};
use floodgate::limiter::RedisDriver;
use floodgate::robots::trap::{TrapScope, TrapSettings, TrapTarget, Traps, READ_EVERY};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

const KEY: IdentityKey = IdentityKey::from_bytes([3; 32]);
const HOUR: Duration = Duration::from_secs(3600);

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn traps_on(redis: &RedisServer, settings_: TrapSettings) -> Traps {
    let driver = Arc::new(RedisDriver::new(&settings(redis.url())).unwrap());
    Traps::on_redis(KEY, settings_, driver)
}

fn now_ms() -> u64 {
    floodgate::clock::wall_now_ms()
}

/// Refreshes `traps` every [`READ_EVERY`], as the proxy's steering loop does, until dropped.
fn refreshing(traps: &Arc<Traps>) -> tokio::task::JoinHandle<()> {
    let traps = traps.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(READ_EVERY);
        loop {
            every.tick().await;
            if let Err(e) = traps.refresh().await {
                eprintln!("refresh: {e}");
            }
        }
    })
}

/// How long until `found` holds, looking every 10 ms for at most `limit`.
async fn seen_within(limit: Duration, found: impl Fn() -> bool) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if found() {
            return Some(started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn traps_a_ban_on_one_instance_holds_on_another_within_a_second() {
    let redis = RedisServer::start();
    let a = Arc::new(traps_on(&redis, TrapSettings::default()));
    let b = Arc::new(traps_on(&redis, TrapSettings::default()));
    // Their first refresh reads the whole (empty) table; the loops then read changes.
    a.refresh().await.unwrap();
    b.refresh().await.unwrap();
    let loops = [refreshing(&a), refreshing(&b)];
    let crawler = ip("198.51.100.7");
    // A reader seen by a is known to b.
    a.read_robots(crawler, now_ms()).await.unwrap();
    assert!(b.has_read(crawler, HOUR, now_ms()).await.unwrap());
    assert!(!b
        .has_read(ip("198.51.100.8"), HOUR, now_ms())
        .await
        .unwrap());
    assert!(!b
        .has_read(crawler, Duration::ZERO, now_ms() + 10)
        .await
        .unwrap());

    a.ban(TrapTarget::Address(crawler), HOUR, now_ms())
        .await
        .unwrap();
    assert!(a.banned(Some(crawler), None, now_ms()).is_some(), "at once");
    let seen = seen_within(Duration::from_secs(1), || {
        b.banned(Some(crawler), None, now_ms()).is_some()
    })
    .await;
    assert!(seen.is_some(), "b holds a's ban within a second");
    eprintln!("b held a's ban {seen:?} later");

    // A proven identity too.
    let identity = Identity::of(&KEY, "header:x-api-key", b"k");
    let target = TrapTarget::Identity {
        source: "header:x-api-key".into(),
        identity,
    };
    b.ban(target, HOUR, now_ms()).await.unwrap();
    let carrying = Some(("header:x-api-key", &identity));
    let seen = seen_within(Duration::from_secs(1), || {
        a.banned(None, carrying, now_ms()).is_some()
    })
    .await;
    assert!(seen.is_some(), "a holds b's identity ban within a second");
    loops.iter().for_each(tokio::task::JoinHandle::abort);

    // One trap path for the fleet, and it survives a restart of the instances.
    let path = a.trap_path().await.unwrap();
    assert!(path.starts_with("/.well-known/floodgate-trap/"), "{path}");
    assert_eq!(b.trap_path().await.unwrap(), path);
    let c = traps_on(&redis, TrapSettings::default());
    assert_eq!(c.trap_path().await.unwrap(), path);

    // An instance that starts later reads the whole table.
    c.refresh().await.unwrap();
    assert!(c.banned(Some(crawler), None, now_ms()).is_some());
    assert!(c.banned(None, carrying, now_ms()).is_some());
    assert_eq!(c.bans_held(), 2);

    // Redis keeps digests only.
    let mut conn = redis.conn();
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut conn).unwrap();
    let traps: Vec<&String> = keys.iter().filter(|k| k.contains("{traps}")).collect();
    assert!(traps.len() >= 5, "{keys:?}");
    for key in &traps {
        let dump: Vec<u8> = redis::cmd("DUMP")
            .arg(key.as_str())
            .query(&mut conn)
            .unwrap();
        let text = String::from_utf8_lossy(&dump);
        assert!(!text.contains("198.51.100"), "{key} holds an address");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn traps_the_fleet_folds_ipv6_and_pushes_the_oldest_out() {
    let redis = RedisServer::start();
    let bounds = TrapSettings {
        max_bans: 3,
        fold_at: 2,
        ..TrapSettings::default()
    };
    let (a, b) = (traps_on(&redis, bounds), traps_on(&redis, bounds));
    let now = now_ms();
    for (n, who) in ["2001:db8:1::1", "2001:db8:2::1", "2001:db8:3::1"]
        .iter()
        .enumerate()
    {
        a.ban(TrapTarget::Address(ip(who)), HOUR, now + n as u64)
            .await
            .unwrap();
    }
    b.refresh().await.unwrap();
    let first = b.banned(Some(ip("2001:db8:1::1")), None, now).unwrap();
    assert_eq!(first.scope, TrapScope::Address);
    assert_eq!(
        b.banned(Some(ip("2001:db8:1::2")), None, now),
        None,
        "alone"
    );
    let third = b.banned(Some(ip("2001:db8:3::99")), None, now).unwrap();
    assert_eq!(
        third.scope,
        TrapScope::Network48,
        "two IPv6 bans held: folded"
    );

    // A fourth ban pushes the oldest out, on b too.
    a.ban(TrapTarget::Address(ip("192.0.2.1")), HOUR, now + 3)
        .await
        .unwrap();
    b.refresh().await.unwrap();
    assert_eq!(b.banned(Some(ip("2001:db8:1::1")), None, now), None);
    assert!(b.banned(Some(ip("192.0.2.1")), None, now).is_some());
    assert!(b.banned(Some(ip("2001:db8:2::1")), None, now).is_some());
    assert_eq!(b.bans_held(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn traps_a_redis_that_is_gone_never_says_an_address_read_the_file() {
    let mut redis = RedisServer::start();
    let traps = traps_on(&redis, TrapSettings::default());
    traps.refresh().await.unwrap();
    redis.kill();
    let crawler = ip("198.51.100.7");
    assert!(traps.has_read(crawler, HOUR, now_ms()).await.is_err());
    assert!(traps.trap_path().await.is_err());
    // A ban Redis did not take is still held here.
    let made = traps
        .ban(TrapTarget::Address(crawler), HOUR, now_ms())
        .await;
    assert!(made.is_err());
    assert!(traps.banned(Some(crawler), None, now_ms()).is_some());
}
