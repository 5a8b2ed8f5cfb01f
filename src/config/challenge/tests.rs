//! The challenge keys of a policy and the `[challenge]` table: defaults, and every bad or
//! misplaced key refused where it stands.

use crate::config::parse;
use crate::config::tests::with_policy;
use crate::identity::{Bind, Challenge, ChallengeKind};
use crate::policy::Action;
use std::path::Path;

fn read(keys: &str) -> Result<crate::config::Config, String> {
    parse(&with_policy(keys), Path::new("f.toml")).map_err(|e| e.to_string())
}

fn table(keys: &str) -> Result<crate::config::Config, String> {
    let policy = with_policy("name = \"p\"\naction = \"challenge\"");
    parse(
        &format!("{policy}\n[challenge]\n{keys}\n"),
        Path::new("f.toml"),
    )
    .map_err(|e| e.to_string())
}

#[test]
fn a_challenge_policy_defaults_to_pow_at_16_bits_bound_to_the_network() {
    let config = read("name = \"p\"\naction = \"challenge\"").unwrap();
    let expected = Challenge {
        kind: ChallengeKind::Pow { difficulty: 16 },
        bind: Bind::Network,
    };
    assert_eq!(config.policies[0].action, Action::Challenge(expected));
    let keys = "name = \"p\"\naction = \"challenge\"\nchallenge = \"refresh\"\nbind = \"none\"";
    let expected = Challenge {
        kind: ChallengeKind::Refresh,
        bind: Bind::None,
    };
    assert_eq!(
        read(keys).unwrap().policies[0].action,
        Action::Challenge(expected)
    );
    let keys =
        "name = \"p\"\ncapacity = 5\nrate = \"1/s\"\non_limit = \"challenge\"\ndifficulty = 20";
    let config = read(keys).unwrap();
    let on_limit = config.policies[0].limit().unwrap().rules.on_limit.unwrap();
    assert_eq!(on_limit.kind, ChallengeKind::Pow { difficulty: 20 });
}

#[test]
fn misplaced_and_bad_challenge_keys_are_refused_where_they_stand() {
    let challenge = "name = \"p\"\naction = \"challenge\"\n";
    let limit = "name = \"p\"\ncapacity = 5\nrate = \"1/s\"\n";
    let cases = [
        (format!("{challenge}difficulty = 0"), "`policy.difficulty`"),
        (format!("{challenge}difficulty = 33"), "`policy.difficulty`"),
        (
            format!("{challenge}challenge = \"captcha\""),
            "`policy.challenge` must be",
        ),
        (
            format!("{challenge}challenge = \"refresh\"\ndifficulty = 8"),
            "a `refresh` challenge does no work",
        ),
        (format!("{challenge}bind = \"ip\""), "`policy.bind` must be"),
        (
            format!("{challenge}on_limit = \"challenge\""),
            "`policy.on_limit`",
        ),
        (
            format!("{challenge}capacity = 5"),
            "`policy.capacity` is for `limit` policies",
        ),
        (
            format!("{limit}difficulty = 8"),
            "is for policies that challenge",
        ),
        (
            format!("{limit}on_limit = \"captcha\""),
            "`refuse` or `challenge`",
        ),
        (
            "name = \"p\"\naction = \"deny\"\nchallenge = \"pow\"".to_owned(),
            "is for policies that challenge",
        ),
    ];
    for (keys, expected) in cases {
        let error = read(&keys).expect_err(&keys);
        assert!(error.contains(expected), "{keys}: {error}");
        assert!(error.starts_with("f.toml:"), "located: {error}");
    }
}

#[test]
fn the_challenge_table_is_read_and_checked() {
    let keys = "status = 429\npass_ttl = \"1d\"\ncookie = \"fg\"\nnever_paths = [\"/api/*\"]";
    let config = table(keys).unwrap();
    assert_eq!(config.challenge.status, 429);
    assert_eq!(config.challenge.pass_ttl.as_secs(), 86_400);
    assert_eq!(config.challenge.cookie, "fg");
    assert_eq!(config.challenge.never_paths, ["/api/*"]);
    let defaults = table("").unwrap().challenge;
    assert_eq!(defaults, crate::challenge::ChallengeSettings::default());
    assert_eq!(
        (defaults.status, defaults.pass_ttl.as_secs()),
        (403, 7 * 86_400)
    );
    for (keys, expected) in [
        (
            "pass_ttl = \"500ms\"",
            "`challenge.pass_ttl` must be from 1s",
        ),
        (
            "path = \"challenge\"",
            "`challenge.path` must be a plain path",
        ),
        ("cookie = \"a b\"", "`challenge.cookie`"),
        ("never_paths = [\"/a*b\"]", "`challenge.never_paths`"),
        ("status = 99", "`challenge.status`"),
        ("status = 304", "`challenge.status` must be 200 or from 400"),
        (
            "nonce_ttl = \"10s\"\nrefresh_wait = \"30s\"",
            "must be longer than",
        ),
    ] {
        let error = table(keys).expect_err(keys);
        assert!(error.contains(expected), "{keys}: {error}");
    }
}
