//! Bans, overrides and a quota's period end when their time is up, by the clock the gate and
//! its control are handed: a set clock is moved past the end, nothing waits.

use crate::clock::Clock;
use crate::control::{Ban, BanTarget, Control, Entry, Override};
use crate::gate::reply::{reply, PolicyHeaders, Reply};
use crate::gate::tests::from_config_by;
use crate::gate::{Gate, OutcomeKind};
use crate::identity::Request;
use crate::policy::RouteFacts;
use http::{HeaderMap, Method};

const HOUR_MS: u64 = 3_600_000;
const POLICY: &str = "[[policy]]\nname = \"per-ip\"\ncapacity = 10\nrate = \"1/h\"\ncost = 5\n";

async fn decide(gate: &Gate) -> OutcomeKind {
    let headers = HeaderMap::new();
    let req = Request::new(&headers, None, "192.0.2.1".parse().ok(), None);
    let route = RouteFacts {
        method: &Method::GET,
        host: None,
        path: "/",
    };
    gate.decide(&req, &route).await.outcome.kind()
}

/// `entry` added to `control` for an hour.
async fn for_an_hour(control: &Control, entry: Entry, key: &str) {
    control.add(entry, Some(HOUR_MS), key).await.unwrap();
}

#[tokio::test]
async fn a_ban_refuses_until_its_hour_is_up_then_the_limits_apply_again() {
    let clock = Clock::set_at(1_700_000_000_000);
    let (gate, control) = from_config_by(POLICY, clock.clone());
    let ban = Entry::Ban(Ban {
        id: 0,
        target: BanTarget::Cidr {
            value: "192.0.2.0/24".into(),
        },
        reason: "test".into(),
        by: "ops".into(),
        created_at_ms: 0,
        expires_at_ms: None,
    });
    for_an_hour(&control, ban, "k1").await;
    assert_eq!(decide(&gate).await, OutcomeKind::Banned);
    clock.advance(HOUR_MS - 1);
    assert_eq!(
        decide(&gate).await,
        OutcomeKind::Banned,
        "a ms before the end"
    );
    clock.advance(1);
    assert_eq!(
        decide(&gate).await,
        OutcomeKind::Allowed,
        "ended, not removed"
    );
}

#[tokio::test]
async fn an_override_applies_until_its_hour_is_up_then_the_policys_limits_again() {
    let clock = Clock::set_at(1_700_000_000_000);
    let (gate, control) = from_config_by(POLICY, clock.clone());
    let headers = HeaderMap::new();
    let req = Request::new(&headers, None, "192.0.2.1".parse().ok(), None);
    let caller = gate.identity().identify(&req, gate.digest_key()).unwrap();
    let shrink = Entry::Override(Override {
        id: 0,
        policy: "per-ip".into(),
        source: "ip".into(),
        caller: caller.hex(),
        capacity: 2,
        rate: "1/h".into(),
        quota: None,
        reason: "test".into(),
        by: "ops".into(),
        created_at_ms: 0,
        expires_at_ms: None,
    });
    for_an_hour(&control, shrink, "k1").await;
    assert_eq!(
        decide(&gate).await,
        OutcomeKind::Throttled,
        "5 of at most 2"
    );
    clock.advance(HOUR_MS);
    assert_eq!(
        decide(&gate).await,
        OutcomeKind::Allowed,
        "the policy's 10 again"
    );
}

#[tokio::test]
async fn a_spent_quota_resets_at_the_midnight_after_the_gates_clock() {
    // 2023-11-14T22:13:20Z, years before the system's clock: the next UTC midnight is the 15th.
    let clock = Clock::set_at(1_700_000_000_000);
    let quota = "[[policy]]\nname = \"daily\"\nquota = 1\nperiod = \"day\"\n";
    let (gate, _control) = from_config_by(quota, clock.clone());
    assert_eq!(decide(&gate).await, OutcomeKind::Allowed);
    let headers = HeaderMap::new();
    let req = Request::new(&headers, None, "192.0.2.1".parse().ok(), None);
    let route = RouteFacts {
        method: &Method::GET,
        host: None,
        path: "/",
    };
    let decision = gate.decide(&req, &route).await;
    let policies = PolicyHeaders::new(&gate);
    let Reply::Refuse(refused) = reply(&decision.outcome, &policies, 429, None, gate.clock())
    else {
        panic!("a spent quota refuses");
    };
    let body = String::from_utf8_lossy(&refused.body);
    assert!(
        body.contains("\"resets_at\":\"2023-11-15T00:00:00"),
        "{body}"
    );
}
