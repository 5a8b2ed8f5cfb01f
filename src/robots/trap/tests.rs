//! [`Traps`] on the memory store: readers within the window, bans found by address, /48 and
//! proven identity, bans that end, the kept trap path. (The fleet's: tests/redis/traps.rs.)

use super::*;
use crate::clock::Clock;
use crate::identity::{Identity, IdentityKey};
use std::net::IpAddr;
use std::time::Duration;

const KEY: IdentityKey = IdentityKey::from_bytes([7; 32]);
const HOUR: Duration = Duration::from_secs(3600);
const T0: u64 = 1_700_000_000_000;

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn traps(settings: TrapSettings) -> Traps {
    Traps::in_memory(KEY, settings, None)
}

#[tokio::test]
async fn a_reader_is_remembered_within_the_window() {
    let traps = traps(TrapSettings::default());
    traps.read_robots(ip("192.0.2.1"), T0).await.unwrap();
    let read = |who, at| traps.has_read(ip(who), HOUR, at);
    assert!(read("192.0.2.1", T0 + 1000).await.unwrap());
    assert!(read("192.0.2.1", T0 + 3_600_000).await.unwrap());
    assert!(!read("192.0.2.1", T0 + 3_600_001).await.unwrap());
    assert!(!read("192.0.2.2", T0).await.unwrap());
}

#[tokio::test]
async fn reads_older_than_trap_window_are_forgotten() {
    let settings = TrapSettings {
        window: HOUR,
        ..TrapSettings::default()
    };
    let traps = traps(settings);
    traps.read_robots(ip("192.0.2.1"), T0).await.unwrap();
    traps
        .read_robots(ip("192.0.2.2"), T0 + 7_200_000)
        .await
        .unwrap();
    assert_eq!(traps.readers_here(), 1);
    traps.set_window(3 * HOUR);
    traps
        .read_robots(ip("192.0.2.3"), T0 + 7_200_001)
        .await
        .unwrap();
    assert_eq!(traps.readers_here(), 2);
}

#[tokio::test]
async fn a_ban_is_found_by_address_until_it_ends() {
    let traps = traps(TrapSettings::default());
    assert_eq!(traps.banned(Some(ip("192.0.2.1")), None, T0), None);
    let target = TrapTarget::Address(ip("192.0.2.1"));
    traps.ban(target, HOUR, T0).await.unwrap();
    let ban = traps.banned(Some(ip("192.0.2.1")), None, T0 + 1).unwrap();
    assert_eq!(ban.scope, TrapScope::Address);
    assert_eq!(ban.until_ms, T0 + 3_600_000);
    assert_eq!(traps.banned(Some(ip("192.0.2.2")), None, T0 + 1), None);
    assert_eq!(traps.banned(None, None, T0 + 1), None);
    assert_eq!(
        traps.banned(Some(ip("192.0.2.1")), None, T0 + 3_600_000),
        None
    );
}

#[tokio::test]
async fn an_ipv6_flood_is_banned_by_its_48() {
    let settings = TrapSettings {
        max_bans: 4,
        fold_at: 2,
        ..TrapSettings::default()
    };
    let traps = traps(settings);
    for n in 1..=3 {
        let target = TrapTarget::Address(ip(&format!("2001:db8:{n}::1")));
        traps.ban(target, HOUR, T0).await.unwrap();
    }
    let neighbour = |n| Some(ip(&format!("2001:db8:{n}::99")));
    assert_eq!(traps.banned(neighbour(1), None, T0), None, "alone");
    let folded = traps.banned(neighbour(3), None, T0).unwrap();
    assert_eq!(folded.scope, TrapScope::Network48);
}

#[tokio::test]
async fn a_proven_identity_is_banned_under_its_source() {
    let traps = traps(TrapSettings::default());
    let identity = Identity::of(&KEY, "header:x-api-key", b"key");
    let target = TrapTarget::Identity {
        source: "header:x-api-key".into(),
        identity,
    };
    traps.ban(target, HOUR, T0).await.unwrap();
    let carrying = Some(("header:x-api-key", &identity));
    let ban = traps.banned(Some(ip("192.0.2.9")), carrying, T0).unwrap();
    assert_eq!(ban.scope, TrapScope::Identity);
    assert_eq!(traps.banned(Some(ip("192.0.2.9")), None, T0), None);
    let elsewhere = Some(("cookie:session", &identity));
    assert_eq!(traps.banned(None, elsewhere, T0), None);
}

#[tokio::test]
async fn a_refresh_drops_the_bans_that_ended() {
    let clock = Clock::set_at(T0);
    let traps = traps(TrapSettings::default()).with_clock(clock.clone());
    traps
        .ban(TrapTarget::Address(ip("192.0.2.1")), HOUR, T0)
        .await
        .unwrap();
    traps.refresh().await.unwrap();
    assert_eq!(traps.bans_held(), 1);
    clock.advance(3_600_000);
    traps.refresh().await.unwrap();
    assert_eq!(traps.bans_held(), 0);
}

#[tokio::test]
async fn the_trap_path_is_one_per_process_or_kept_in_its_file() {
    let traps = traps(TrapSettings::default());
    let path = traps.trap_path().await.unwrap();
    assert!(path.starts_with(TRAP_PREFIX), "{path}");
    assert_eq!(traps.trap_path().await.unwrap(), path);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("trap-path");
    let kept = Traps::in_memory(KEY, TrapSettings::default(), Some(file.clone()));
    let first = kept.trap_path().await.unwrap();
    let restarted = Traps::in_memory(KEY, TrapSettings::default(), Some(file));
    assert_eq!(restarted.trap_path().await.unwrap(), first);
    assert_ne!(first, path);
}
