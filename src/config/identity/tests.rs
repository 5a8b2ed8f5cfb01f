//! Tests of `[identity]`'s typed values: each mistake located at its value, naming its key.

use crate::config::parse;
use crate::config::tests::BASE;
use std::path::Path;

/// The error of [`BASE`] with `section` (its header on line 9, its first key on line 10).
fn error_of(section: &str) -> String {
    let text = format!("{BASE}\n{section}\n");
    parse(&text, Path::new("f.toml")).unwrap_err().to_string()
}

#[test]
fn each_mistake_is_located_at_its_value_and_names_its_key() {
    let cases = [
        (
            "[identity.ip]\nipv4_prefix = 33",
            "f.toml:10:15: `identity.ip.ipv4_prefix` must be between 1 and 32, not 33",
        ),
        (
            "[identity.ip]\nipv6_prefix = 0",
            "f.toml:10:15: `identity.ip.ipv6_prefix` must be between 1 and 128, not 0",
        ),
        (
            "[identity]\nja4_header = \"x ja4\"",
            "f.toml:10:14: `identity.ja4_header` must be a header name, not `x ja4`",
        ),
        (
            "[identity.jwt]\nalgorithms = [\"HS256\"]\nsecret = \"s\"\nleeway = \"a while\"",
            "f.toml:12:10: `identity.jwt.leeway` must be a duration like 500ms or 30s: \
             expected number at 0",
        ),
        (
            "[response]\nstatus = 200",
            "f.toml:10:10: `response.status` must be between 400 and 599, not 200",
        ),
    ];
    for (section, message) in cases {
        assert_eq!(error_of(section), message, "{section}");
    }
}

#[test]
fn unwritten_keys_take_the_defaults() {
    let config = parse(BASE, Path::new("f.toml")).unwrap();
    assert_eq!(config.identity.ip, crate::identity::IpFolding::default());
    assert_eq!(config.response, crate::config::ResponseSettings::default());
}
