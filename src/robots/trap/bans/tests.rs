//! The ban table: bounded, oldest first out, bans that end, IPv6 folded to /48 past the
//! threshold, identities matched with their source.

use super::*;
use crate::identity::{Identity, IdentityKey};
use crate::robots::trap::target::{TrapScope, TrapTarget};
use std::net::IpAddr;

const KEY: IdentityKey = IdentityKey::from_bytes([7; 32]);
const HOUR: u64 = 3_600_000;

fn address(text: &str) -> Wanted {
    let ip: IpAddr = text.parse().unwrap();
    Wanted::of(&TrapTarget::Address(ip), &KEY)
}

fn find(table: &BanTable, wanted: &Wanted, now_ms: u64) -> Option<TrapBan> {
    let source = wanted.source.as_deref();
    let direct = table.find(&wanted.field, source, now_ms);
    direct.or_else(|| table.find(&wanted.network?, None, now_ms))
}

#[test]
fn a_ban_holds_until_it_ends() {
    let table = BanTable::new(10, 5);
    assert!(table.is_empty());
    let who = address("192.0.2.1");
    let field = table.ban(&who, 2 * HOUR, HOUR);
    assert_eq!(field.scope, TrapScope::Address);
    let ban = find(&table, &who, HOUR).unwrap();
    assert_eq!((ban.scope, ban.until_ms), (TrapScope::Address, 2 * HOUR));
    assert_eq!(find(&table, &who, 2 * HOUR), None, "ended");
    assert_eq!(find(&table, &address("192.0.2.2"), HOUR), None);
    table.expire(2 * HOUR);
    assert!(table.is_empty());
}

#[test]
fn a_ban_made_again_lasts_the_longer() {
    let table = BanTable::new(10, 5);
    let who = address("192.0.2.1");
    table.ban(&who, 5 * HOUR, 0);
    table.ban(&who, 2 * HOUR, HOUR);
    assert_eq!(find(&table, &who, HOUR).unwrap().until_ms, 5 * HOUR);
    table.ban(&who, 7 * HOUR, HOUR);
    assert_eq!(find(&table, &who, HOUR).unwrap().until_ms, 7 * HOUR);
    assert_eq!(table.len(), 1);
}

#[test]
fn the_oldest_ban_goes_first() {
    let table = BanTable::new(3, 3);
    let [a, b, c, d] = ["192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"].map(address);
    for (i, who) in [&a, &b, &c].into_iter().enumerate() {
        table.ban(who, 10 * HOUR, i as u64);
    }
    // Made again, a is the newest: b is now the oldest.
    table.ban(&a, 10 * HOUR, 3);
    // A lookup makes nothing newer.
    assert!(find(&table, &b, 4).is_some());
    table.ban(&d, 10 * HOUR, 5);
    assert_eq!(table.len(), 3);
    assert_eq!(find(&table, &b, 6), None, "the oldest went");
    for kept in [&a, &c, &d] {
        assert!(find(&table, kept, 6).is_some());
    }
}

#[test]
fn ipv6_is_folded_to_its_48_from_the_threshold_on() {
    let table = BanTable::new(100, 2);
    let first = address("2001:db8:1::1");
    let second = address("2001:db8:2::1");
    assert_eq!(table.ban(&first, HOUR, 0).scope, TrapScope::Address);
    // IPv4 bans do not count toward the threshold.
    table.ban(&address("192.0.2.1"), HOUR, 0);
    assert_eq!(table.ban(&second, HOUR, 0).scope, TrapScope::Address);
    // Two IPv6 bans held: the next covers its /48.
    let third = address("2001:db8:3::1");
    assert_eq!(table.ban(&third, HOUR, 0).scope, TrapScope::Network48);
    let neighbour = address("2001:db8:3:ffff::2");
    let ban = find(&table, &neighbour, 1).unwrap();
    assert_eq!(ban.scope, TrapScope::Network48);
    assert_eq!(find(&table, &address("2001:db8:4::1"), 1), None);
    // Below the threshold again (the bans ended), an address is banned alone.
    table.expire(HOUR);
    let fourth = address("2001:db8:5::1");
    assert_eq!(table.ban(&fourth, 2 * HOUR, HOUR).scope, TrapScope::Address);
    assert_eq!(find(&table, &address("2001:db8:5::2"), HOUR), None);
}

#[test]
fn ipv4_is_never_folded() {
    let table = BanTable::new(100, 0);
    assert_eq!(
        table.ban(&address("192.0.2.1"), HOUR, 0).scope,
        TrapScope::Address
    );
    assert_eq!(
        table.ban(&address("2001:db8::1"), HOUR, 0).scope,
        TrapScope::Network48
    );
}

#[test]
fn an_identity_is_banned_under_its_source_only() {
    let table = BanTable::new(10, 5);
    let identity = Identity::of(&KEY, "header:x-api-key", b"k");
    let target = TrapTarget::Identity {
        source: "header:x-api-key".into(),
        identity,
    };
    let wanted = Wanted::of(&target, &KEY);
    assert_eq!(table.ban(&wanted, HOUR, 0).scope, TrapScope::Identity);
    let ban = table
        .find(&wanted.field, Some("header:x-api-key"), 1)
        .unwrap();
    assert_eq!(ban.scope, TrapScope::Identity);
    assert_eq!(table.find(&wanted.field, Some("cookie:session"), 1), None);
    assert_eq!(table.find(&wanted.field, None, 1), None);
}

#[test]
fn the_fleets_table_replaces_the_mirror_whole() {
    let table = BanTable::new(2, 1);
    let [a, b, c] = ["192.0.2.1", "192.0.2.2", "2001:db8::1"].map(address);
    table.ban(&a, HOUR, 0);
    let held = |v6| Held {
        until_ms: HOUR,
        v6,
        source: None,
    };
    table.replace(vec![
        (b.field, held(false)),
        (c.field, held(true)),
        (a.field, held(false)),
    ]);
    assert_eq!(table.len(), 2, "bounded, the oldest out");
    assert_eq!(find(&table, &b, 0), None);
    assert!(find(&table, &a, 0).is_some() && find(&table, &c, 0).is_some());
    table.remove(&c.field);
    assert_eq!(find(&table, &c, 0), None);
    // One IPv6 ban was held and dropped: the count follows, so no folding at fold_at = 1.
    assert_eq!(table.ban(&c, HOUR, 0).scope, TrapScope::Address);
}
