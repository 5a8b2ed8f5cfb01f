use crate::config::parse;
use crate::overload::MaxInFlight;
use crate::policy::{Action, Priority};
use std::path::Path;
use std::time::Duration;

const BASE: &str = "[server]\nlisten = \"127.0.0.1:1\"\n[upstream]\nbackends = [\"127.0.0.1:1\"]\n";

fn load(extra: &str) -> Result<crate::config::Config, String> {
    parse(&format!("{BASE}{extra}"), Path::new("t.toml")).map_err(|e| e.to_string())
}

#[test]
fn an_empty_overload_table_measures_with_the_defaults() {
    let config = load("[overload]\n").unwrap();
    let o = config.overload.unwrap();
    assert_eq!(
        o.max_in_flight,
        MaxInFlight::Auto {
            floor: 2,
            ceiling: 1000
        }
    );
    assert_eq!(o.queue_time, Duration::from_secs(1));
    assert!(load("").unwrap().overload.is_none());
}

#[test]
fn a_number_is_the_fleets_total() {
    let config =
        load("[overload]\nmax_in_flight = 8\nqueue_time = \"250ms\"\nlatency_target = \"200ms\"\n")
            .unwrap();
    let o = config.overload.unwrap();
    assert_eq!(o.max_in_flight, MaxInFlight::Fleet(8));
    assert_eq!(o.latency_target, Some(Duration::from_millis(200)));
}

#[test]
fn bad_overload_keys_are_refused_where_they_stand() {
    for (extra, expected) in [
        (
            "[overload]\nmax_in_flight = 0\n",
            "t.toml:6:17: `overload.max_in_flight` must be a whole number from 1",
        ),
        ("[overload]\nmax_in_flight = -3\n", "not -3"),
        (
            "[overload]\nmax_in_flight = \"lots\"\n",
            "or \"auto\", not \"lots\"",
        ),
        ("[overload]\nmax_in_flight = 2.5\n", "not a float"),
        (
            "[overload]\nqueue_time = \"61s\"\n",
            "t.toml:6:14: `overload.queue_time` must be at most 60s",
        ),
        (
            "[overload]\nmax_in_flight = 8\nmin_in_flight = 2\n",
            "t.toml:7:17: `overload.min_in_flight` is for `max_in_flight = \"auto\"`",
        ),
        (
            "[overload]\nmin_in_flight = 9\nauto_ceiling = 4\n",
            "`overload.auto_ceiling` (4) is below",
        ),
        ("[overload]\nlatency_target = \"0s\"\n", "must be above 0"),
        ("[overload]\nshed = true\n", "unknown field `shed`"),
    ] {
        let error = load(extra).unwrap_err();
        assert!(error.contains(expected), "{extra:?}: {error}");
    }
}

#[test]
fn a_policy_with_only_a_priority_classifies() {
    let config = load(
        "[[policy]]\nname = \"customers\"\nmatch = { headers = { x-api-key = true } }\npriority = \"high\"\n",
    )
    .unwrap();
    let policy = &config.policies[0];
    assert_eq!(policy.action, Action::Classify);
    assert_eq!(policy.overload.priority, Some(Priority::High));
    assert!(policy.to_string().contains("priority high"), "{policy}");
    let limited = load("[[policy]]\nname = \"p\"\ncapacity = 5\nrate = \"1/s\"\npriority = \"low\"\non_overload = \"challenge\"\ndifficulty = 4\n").unwrap();
    let policy = &limited.policies[0];
    assert!(matches!(policy.action, Action::Limit(_)));
    assert!(policy.overload.on_overload.is_some());
    assert!(
        policy.to_string().contains("on overload: challenge"),
        "{policy}"
    );
}

#[test]
fn bad_policy_overload_keys_are_refused_where_they_stand() {
    for (extra, expected) in [
        ("[[policy]]\nname = \"p\"\npriority = \"urgent\"\n", "t.toml:7:12: `policy.priority` must be `critical`, `high`, `normal` or `low`, not `urgent`"),
        ("[[policy]]\nname = \"p\"\non_overload = \"drop\"\n", "`policy.on_overload` must be `shed` or `challenge`"),
        ("[[policy]]\nname = \"p\"\nmatch = { methods = [\"POST\"] }\non_overload = \"challenge\"\n", "t.toml:8:15: `policy.on_overload = \"challenge\"` cannot apply"),
        ("[[policy]]\nname = \"p\"\naction = \"deny\"\non_overload = \"challenge\"\n", "a `deny` policy forwards nothing"),
        ("[[policy]]\nname = \"p\"\npriority = \"high\"\nmax_delay = \"1s\"\n", "`policy.max_delay` is for `limit` policies"),
    ] {
        let error = load(extra).unwrap_err();
        assert!(error.contains(expected), "{extra:?}: {error}");
    }
}
