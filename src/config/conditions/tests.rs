//! `match.headers`, `match.user_agent`, `match.networks` and `action`, read and refused.

use crate::config::parse;
use crate::config::tests::{with_policy, BASE};
use crate::policy::{Action, HeaderRule};
use std::path::Path;

fn error_of(policy: &str) -> String {
    parse(&with_policy(policy), Path::new("f.toml"))
        .unwrap_err()
        .to_string()
}

#[test]
fn conditions_and_actions_are_read() {
    let text = with_policy(concat!(
        "name = \"keyed\"\ncapacity = 100\nrate = \"100/m\"\n",
        "match = { headers = { \"X-Api-Key\" = true, \"x-debug\" = false, accept = \"^text/html\" }, ",
        "user_agent = \"bot\", networks = [\"203.0.113.0/24\", \"::ffff:10.0.0.0/104\"] }\n",
        "[[policy]]\nname = \"no-bots\"\naction = \"deny\"\nshadow = true\n",
    ));
    let config = parse(&text, Path::new("f.toml")).unwrap();
    let keyed = &config.policies[0];
    assert_eq!(keyed.action, Action::Limit);
    let rules: Vec<(&str, &HeaderRule)> = keyed
        .conditions
        .headers
        .iter()
        .map(|(n, r)| (n.as_str(), r))
        .collect();
    assert_eq!(rules[0].0, "x-api-key");
    assert_eq!(*rules[0].1, HeaderRule::Present);
    assert!(rules
        .iter()
        .any(|(n, r)| *n == "x-debug" && **r == HeaderRule::Absent));
    assert!(rules
        .iter()
        .any(|(n, r)| *n == "accept" && matches!(r, HeaderRule::Matches(_))));
    assert_eq!(
        keyed.conditions.user_agent.as_ref().unwrap().0.as_str(),
        "bot"
    );
    assert_eq!(keyed.conditions.networks[1].to_string(), "10.0.0.0/8");
    let deny = &config.policies[1];
    assert_eq!((deny.action, deny.shadow), (Action::Deny, true));
}

#[test]
fn bad_conditions_are_refused_where_they_stand() {
    let base = "name = \"p\"\ncapacity = 5\nrate = \"1/s\"\n";
    let message = error_of(&format!("{base}match = {{ headers = {{ a = 3 }} }}"));
    assert!(message.starts_with("f.toml:13:"), "{message}");
    assert!(
        message.contains("must be true (present), false (absent) or a regex"),
        "{message}"
    );
    let message = error_of(&format!("{base}match = {{ headers = {{ a = \"([\" }} }}"));
    assert!(message.contains("`policy.match.headers.a`"), "{message}");
    let message = error_of(&format!(
        "{base}match = {{ headers = {{ \"x y\" = true }} }}"
    ));
    assert!(message.contains("is not a header name"), "{message}");
    let message = error_of(&format!("{base}match = {{ user_agent = \"([\" }}"));
    assert!(
        message.starts_with("f.toml:13:24: `policy.match.user_agent`"),
        "{message}"
    );
    let message = error_of(&format!("{base}match = {{ networks = [\"10.0.0.0/33\"] }}"));
    assert!(message.starts_with("f.toml:13:"), "{message}");
    assert!(message.contains("is not a network"), "{message}");
}

#[test]
fn actions_are_checked_and_only_limit_needs_a_bucket() {
    let message = error_of("name = \"p\"\naction = \"block\"");
    assert!(
        message.starts_with("f.toml:11:10: `policy.action` must be"),
        "{message}"
    );
    let message = error_of("name = \"p\"\naction = \"limit\"");
    assert!(message.contains("needs `capacity` and `rate`"), "{message}");
    let message = error_of("name = \"p\"");
    assert!(message.contains("needs `capacity` and `rate`"), "{message}");
    assert!(parse(
        &with_policy("name = \"p\"\naction = \"allow\""),
        Path::new("f.toml")
    )
    .is_ok());
    let message = error_of("name = \"p\"\naction = \"deny\"\nrate = \"1/s\"");
    assert!(
        message.starts_with("f.toml:12:8: `policy.rate` is for `limit` policies"),
        "{message}"
    );
}

#[test]
fn a_route_table_refuses_request_conditions() {
    let text = format!(
        "{BASE}\n[upstream.pools.b]\nbackends = [\"127.0.0.1:8001\"]\n\n[[route]]\npool = \"b\"\nmatch = {{ user_agent = \"x\" }}\n"
    );
    let message = parse(&text, Path::new("f.toml")).unwrap_err().to_string();
    assert!(message.contains("unknown field `user_agent`"), "{message}");
}
