//! `match.headers`, `match.user_agent`, `match.networks`, `unless` and `action`, read and refused.

use crate::config::parse;
use crate::config::tests::{with_policy, BASE};
use crate::policy::{Action, Enforcement, HeaderRule};
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
    assert!(matches!(keyed.action, Action::Limit(_)));
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
    assert_eq!(
        (&deny.action, deny.enforcement),
        (&Action::Deny, Enforcement::Shadow)
    );
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
    let message = error_of("name = \"p\"\naction = \"allow\"\nsources = [\"ip\"]");
    assert!(
        message.starts_with("f.toml:12:11: `policy.sources` is for `limit` policies"),
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

#[test]
fn unless_takes_the_keys_of_match_and_is_described() {
    let text = with_policy(concat!(
        "name = \"anonymous\"\ncapacity = 10\nrate = \"1/s\"\n",
        "match = { path_prefix = \"/api\" }\n",
        "unless = { bot = [\"search-engine\", \"ai-crawler\"], verified = true, methods = [\"get\"] }",
    ));
    let config = parse(&text, Path::new("f.toml")).unwrap();
    let unless = config.policies[0].unless.as_ref().expect("an unless");
    assert_eq!(unless.conditions.sender.verified, Some(true));
    assert_eq!(unless.route.methods, [http::Method::GET]);
    let described = config.policies[0].to_string();
    assert!(
        described.contains("; unless GET bot search-engine, ai-crawler verified"),
        "{described}"
    );
    let config = parse(
        &with_policy("name = \"p\"\ncapacity = 5\nrate = \"1/s\""),
        Path::new("f.toml"),
    )
    .unwrap();
    assert_eq!(config.policies[0].unless, None);
}

#[test]
fn a_bad_unless_is_refused_where_it_stands_as_in_match() {
    let base = "name = \"p\"\ncapacity = 5\nrate = \"1/s\"\n";
    for (unless, expected) in [
        (
            "{ colour = \"red\" }",
            "f.toml:13:12: unknown field `colour`",
        ),
        (
            "{ networks = [\"nope\"] }",
            "f.toml:13:24: `policy.unless.networks`: `nope` is not a network",
        ),
        (
            "{ user_agent = \"([\" }",
            "f.toml:13:25: `policy.unless.user_agent`",
        ),
        (
            "{ headers = { a = 3 } }",
            "f.toml:13:28: `policy.unless.headers.a` must be true (present)",
        ),
        (
            "{ path_regex = \"(\" }",
            "f.toml:13:25: `policy.unless.path_regex`",
        ),
        (
            "{ asn = [0] }",
            "f.toml:13:19: `policy.unless.asn`: `0` is not an AS number",
        ),
        (
            "{ bot = [] }",
            "f.toml:13:18: `policy.unless.bot` needs at least one value",
        ),
        (
            "{}",
            "f.toml:13:10: `policy.unless` is empty: it would exempt every request",
        ),
    ] {
        let message = error_of(&format!("{base}unless = {unless}"));
        assert!(message.starts_with(expected), "{unless}: {message}");
    }
}
