//! Each room's typed values, one mistake each: located by toml at the value, naming the key.

use crate::config::parse;
use crate::config::tests::BASE;
use std::path::Path;

/// The error of [`BASE`] with `section` (its header on line 9, its first key on line 10).
fn error_of(section: &str) -> String {
    let text = format!("{BASE}\n{section}\n");
    parse(&text, Path::new("f.toml")).unwrap_err().to_string()
}

#[test]
fn a_typed_value_of_every_room_is_located_at_itself() {
    let cases = [
        (
            "[rls]\nlisten = \"8081\"",
            "f.toml:10:10: `rls.listen` must be an address like 127.0.0.1:8080, not `8081`",
        ),
        (
            "[rls]\nmax_concurrent_streams = 0",
            "f.toml:10:26: `rls.max_concurrent_streams` must be between 1 and 100000, not 0",
        ),
        (
            "[[policy]]\nname = \"p\"\ncapacity = 5\nrate = \"1/s\"\ncost = 0",
            "f.toml:13:8: `policy.cost` must be between 1 and 1099511627776, not 0",
        ),
        (
            "[[policy]]\nname = \"p\"\nmax_in_flight = 0",
            "f.toml:11:17: `policy.max_in_flight` must be between 1 and 1000000, not 0",
        ),
        (
            "[check]\nlisten = \"x\"",
            "f.toml:10:10: `check.listen` must be an address like 127.0.0.1:8080, not `x`",
        ),
        (
            "[crowdsec]\nmax_answer_bytes = 10",
            "f.toml:10:20: `crowdsec.max_answer_bytes` must be between 1024 and 4294967296, \
             not 10",
        ),
        (
            "[overload]\nmax_queued = -1",
            "f.toml:10:14: `overload.max_queued` must be between 0 and 1000000, not -1",
        ),
        (
            "[overload]\nlatency_target = \"0s\"",
            "f.toml:10:18: `overload.latency_target` must be above 0",
        ),
        (
            "[challenge]\npass_ttl = \"forever\"",
            "f.toml:10:12: `challenge.pass_ttl` must be a duration like 500ms or 30s: \
             expected number at 0",
        ),
        (
            "[challenge]\nnonce_ttl = \"0s\"",
            "f.toml:10:13: `challenge.nonce_ttl` must be from 1s to 1day",
        ),
        (
            "[tls.acme]\nrenew_before = \"soon\"",
            "f.toml:10:16: `tls.acme.renew_before` must be a duration like 500ms or 30s: \
             expected number at 0",
        ),
    ];
    for (section, message) in cases {
        assert_eq!(error_of(section), message, "{section}");
    }
}
