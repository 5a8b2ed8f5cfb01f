use super::*;
use crate::control::entry::{Ban, BanTarget, Entry, Override};
use crate::limiter::PolicyKey;
use http::HeaderMap;

fn key() -> IdentityKey {
    IdentityKey::from_bytes([3; 32])
}

fn ban(id: u64, target: BanTarget, expires_at_ms: Option<u64>) -> Ban {
    Ban {
        id,
        target,
        reason: String::new(),
        by: "ops".into(),
        created_at_ms: 0,
        expires_at_ms,
    }
}

fn cidr(text: &str) -> BanTarget {
    BanTarget::Cidr { value: text.into() }
}

fn request<'a>(headers: &'a HeaderMap, ip: &str) -> Request<'a> {
    Request::new(headers, None, Some(ip.parse().unwrap()), None)
}

#[test]
fn a_network_ban_refuses_every_address_in_it_until_it_ends() {
    let contents = Contents {
        bans: vec![
            ban(1, cidr("203.0.113.0/24"), Some(10_000)),
            ban(2, cidr("2001:db8::/48"), None),
        ],
        overrides: vec![],
    };
    let view = ControlView::new(contents);
    let headers = HeaderMap::new();
    let folding = IpFolding::default();
    let at = |ip: &str, now| view.ban_for(&request(&headers, ip), &folding, &key(), now);
    assert_eq!(at("203.0.113.77", 9_999).map(|b| b.id), Some(1));
    assert_eq!(at("203.0.113.77", 10_000), None, "ended");
    assert_eq!(at("203.0.114.1", 0), None);
    assert_eq!(at("2001:db8:0:ffff::1", u64::MAX).map(|b| b.id), Some(2));
    assert_eq!(
        at("::ffff:203.0.113.5", 0).map(|b| b.id),
        Some(1),
        "mapped v4"
    );
}

#[test]
fn a_caller_ban_meets_the_requests_its_source_identifies_and_overrides_apply_by_policy() {
    let spec: SourceSpec = "header:x-api-key".parse().unwrap();
    let alice = Identity::of(&key(), spec.tag(), b"alice");
    let contents = Contents {
        bans: vec![ban(
            1,
            BanTarget::Caller {
                source: spec.to_string(),
                caller: alice.hex(),
            },
            None,
        )],
        overrides: vec![Override {
            id: 2,
            policy: "per-user".into(),
            source: spec.to_string(),
            caller: alice.hex(),
            capacity: 50,
            rate: "5/s".into(),
            quota: None,
            reason: String::new(),
            by: "ops".into(),
            created_at_ms: 0,
            expires_at_ms: Some(100),
        }],
    };
    let view = ControlView::new(contents);
    let mut headers = HeaderMap::new();
    headers.insert("x-api-key", "alice".parse().unwrap());
    let folding = IpFolding::default();
    let banned = view.ban_for(&request(&headers, "10.0.0.1"), &folding, &key(), 0);
    assert_eq!(banned.map(|b| b.id), Some(1));
    headers.insert("x-api-key", "bob".parse().unwrap());
    assert_eq!(
        view.ban_for(&request(&headers, "10.0.0.1"), &folding, &key(), 0),
        None
    );

    let policy = PolicyKey::new("per-user").id();
    let applied = view.override_for(policy, alice, 99).unwrap();
    assert_eq!(applied.size.capacity(), 50);
    assert!(view.override_for(policy, alice, 100).is_none(), "ended");
    assert!(view
        .override_for(PolicyKey::new("other").id(), alice, 0)
        .is_none());
}

#[test]
fn a_view_changed_one_entry_at_a_time_answers_as_one_built_whole() {
    let headers = HeaderMap::new();
    let folding = IpFolding::default();
    let mut view = ControlView::default();
    for (id, net) in [
        (1, "203.0.113.0/24"),
        (2, "203.0.113.7/32"),
        (3, "10.0.0.0/8"),
    ] {
        view.apply(&Change::added(Entry::Ban(ban(id, cidr(net), None)), None));
    }
    view.apply(&Change::gone(vec![2, 3]));
    let whole = ControlView::new(Contents {
        bans: vec![ban(1, cidr("203.0.113.0/24"), None)],
        overrides: vec![],
    });
    for ip in ["203.0.113.7", "203.0.113.8", "10.1.1.1", "192.0.2.1"] {
        let at = |v: &ControlView| v.ban_for(&request(&headers, ip), &folding, &key(), 0);
        assert_eq!(at(&view), at(&whole), "{ip}");
    }
    assert_eq!(view.bans().keys().copied().collect::<Vec<_>>(), vec![1]);
    view.apply(&Change::gone(vec![1]));
    assert!(view.is_empty() && !view.has_bans());
}
