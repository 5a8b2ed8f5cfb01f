//! One small config per mistake, each asserting the located message.

use super::*;
use crate::limiter::{OnError, StoreSettings};

/// The smallest valid config.
pub(super) const BASE: &str = r#"
[server]
listen = "127.0.0.1:8080"
threads = 2

[upstream]
backends = ["127.0.0.1:8000"]
"#;

fn error_of(text: &str) -> String {
    parse(text, Path::new("f.toml")).unwrap_err().to_string()
}

/// [`BASE`] with one policy of these keys.
pub(super) fn with_policy(policy: &str) -> String {
    format!("{BASE}\n[[policy]]\n{policy}\n")
}

#[test]
fn a_minimal_config_gets_the_documented_defaults() {
    let config = parse(BASE, Path::new("f.toml")).unwrap();
    assert_eq!(config.admin.listen.to_string(), "127.0.0.1:9090");
    assert_eq!(config.response.throttle_status, 429);
    assert_eq!(config.identity.sources, vec!["ip".parse().unwrap()]);
    assert_eq!(
        config.store,
        StoreSettings::Memory {
            max_entries: 1_000_000
        }
    );
    assert!(config.policies.is_empty());
    assert_eq!(
        config.server.limits,
        crate::proxy::ConnectionLimits::default()
    );
}

#[test]
fn a_misspelled_key_is_named_with_its_line_and_column() {
    let text = BASE.replace("threads = 2", "thread = 2");
    let message = error_of(&text);
    assert!(
        message.starts_with("f.toml:4:1: unknown field `thread`"),
        "{message}"
    );
}

#[test]
fn a_zero_rate_is_refused_where_it_stands() {
    let message = error_of(&with_policy("name = \"p\"\ncapacity = 1\nrate = \"0/s\""));
    assert!(
        message.starts_with("f.toml:12:8: `policy.rate`: invalid rate `0/s`"),
        "{message}"
    );
}

#[test]
fn negative_and_unparsable_rates_are_refused() {
    for rate in ["-1/s", "fast", "10/y"] {
        let message = error_of(&with_policy(&format!(
            "name = \"p\"\ncapacity = 1\nrate = \"{rate}\""
        )));
        assert!(message.contains("`policy.rate`: invalid rate"), "{message}");
    }
}

#[test]
fn a_cost_above_capacity_is_refused() {
    let message = error_of(&with_policy(
        "name = \"p\"\ncapacity = 2\nrate = \"1/s\"\ncost = 3",
    ));
    assert!(
        message.starts_with("f.toml:13:8: `policy.cost` (3) is above"),
        "{message}"
    );
}

#[test]
fn a_zero_capacity_is_refused() {
    let message = error_of(&with_policy("name = \"p\"\ncapacity = 0\nrate = \"1/s\""));
    assert!(
        message.contains("`policy.capacity` must be between 1"),
        "{message}"
    );
}

#[test]
fn duplicate_policy_names_are_refused() {
    let one = "name = \"p\"\ncapacity = 1\nrate = \"1/s\"";
    let message = error_of(&format!("{}\n[[policy]]\n{one}\n", with_policy(one)));
    assert!(message.contains("`p` is used by two policies"), "{message}");
}

#[test]
fn policy_names_must_be_header_and_label_safe() {
    let message = error_of(&with_policy("name = \"a b\"\ncapacity = 1\nrate = \"1/s\""));
    assert!(message.contains("`policy.name` must be"), "{message}");
}

#[test]
fn an_unknown_identity_source_is_refused() {
    let message = error_of(&format!(
        "{BASE}\n[identity]\nsources = [\"ip\", \"finger:print\"]\n"
    ));
    assert!(
        message.starts_with("f.toml:10:18: `identity.sources`: unknown identity source"),
        "{message}"
    );
}

#[test]
fn a_bad_listen_address_is_refused() {
    let message = error_of(&BASE.replace("127.0.0.1:8080", "localhost"));
    assert!(
        message.starts_with("f.toml:3:10: `server.listen` must be an address"),
        "{message}"
    );
}

#[test]
fn an_unknown_store_kind_is_refused() {
    let message = error_of(&format!("{BASE}\n[store]\nkind = \"etcd\"\n"));
    assert!(
        message.starts_with("f.toml:10:8: unknown variant `etcd`"),
        "{message}"
    );
}

#[test]
fn a_bad_status_and_duration_are_refused() {
    let message = error_of(&format!("{BASE}\n[response]\nstatus = 200\n"));
    assert!(
        message.contains("`response.status` must be between 400 and 599"),
        "{message}"
    );
    let message = error_of(&BASE.replace("[upstream]", "[upstream]\nread_timeout = \"soon\""));
    assert!(
        message.contains("`upstream.read_timeout` must be a duration"),
        "{message}"
    );
}

#[test]
fn syntax_errors_are_located() {
    let message = error_of("[server\nlisten = 1");
    assert!(message.starts_with("f.toml:1:"), "{message}");
}

#[test]
fn a_redis_store_needs_a_url_and_keeps_credentials_out_of_print() {
    let message = error_of(&format!("{BASE}\n[store]\nkind = \"redis\"\n"));
    assert!(
        message.starts_with("f.toml:10:8: `kind = \"redis\"` needs `store.url`"),
        "{message}"
    );
    let text = format!("{BASE}\n[store]\nkind = \"redis\"\nurl = \"redis://u:s3cret@127.0.0.1:6379\"\npassword = \"hunter2\"\n");
    let config = parse(&text, Path::new("f.toml")).unwrap();
    let StoreSettings::Redis(redis) = &config.store else {
        panic!("a redis store")
    };
    assert_eq!(redis.on_error, OnError::Local, "the default");
    assert_eq!(redis.timeout, std::time::Duration::from_millis(250));
    let printed = format!("{config}{:?}", config);
    assert!(
        !printed.contains("s3cret") && !printed.contains("hunter2"),
        "{printed}"
    );
    assert!(printed.contains("redis://***@127.0.0.1:6379"));
}

#[test]
fn a_bad_redis_url_and_on_error_are_refused() {
    let message = error_of(&format!(
        "{BASE}\n[store]\nkind = \"redis\"\nurl = \"http://x\"\n"
    ));
    assert!(
        message.contains("`store.url` must be a redis:// or rediss:// URL"),
        "{message}"
    );
    let message = error_of(&format!(
        "{BASE}\n[store]\nkind = \"redis\"\nurl = \"redis://h\"\non_error = \"pray\"\n"
    ));
    assert!(message.contains("unknown variant `pray`"), "{message}");
    let message = error_of(&format!("{BASE}\n[store]\nurl = \"redis://h\"\n"));
    assert!(
        message.contains("`store.url` needs `kind = \"redis\"`"),
        "{message}"
    );
}

#[test]
fn jwt_sources_need_keys_and_keys_must_fit_their_algorithms() {
    let message = error_of(&format!("{BASE}\n[identity]\nsources = [\"jwt:sub\"]\n"));
    assert!(
        message
            .starts_with("f.toml:10:12: `identity.sources`: `jwt:` sources need an [identity.jwt]"),
        "{message}"
    );
    let jwt = "[identity.jwt]\nalgorithms = [\"RS256\"]\nsecret = \"s\"\n";
    let message = error_of(&format!(
        "{BASE}\n[identity]\nsources = [\"jwt:sub\"]\n{jwt}"
    ));
    assert!(message.contains("do not fit the key"), "{message}");
    let both = "[identity.jwt]\nalgorithms = [\"HS256\"]\nsecret = \"s\"\njwks_file = \"x.json\"\n";
    let message = error_of(&format!("{BASE}\n{both}"));
    assert!(
        message.contains("exactly one of `secret`, `public_key_file` or `jwks_file`"),
        "{message}"
    );
    let unknown = "[identity.jwt]\nalgorithms = [\"none\"]\nsecret = \"s\"\n";
    assert!(error_of(&format!("{BASE}\n{unknown}")).contains("unknown algorithm `none`"));
}

#[test]
fn routes_tiers_sources_and_lists_are_checked() {
    let policy = |extra: &str| {
        with_policy(&format!(
            "name = \"p\"\ncapacity = 5\nrate = \"1/s\"\n{extra}"
        ))
    };
    let message = error_of(&policy("match = { path_regex = \"([\" }"));
    assert!(message.contains("`policy.match.path_regex`"), "{message}");
    let message = error_of(&policy("match = { methods = [\"GE T\"] }"));
    assert!(message.contains("is not a method"), "{message}");
    let message = error_of(&policy("tier = \"header:x-plan\""));
    assert!(
        message.contains("needs a [policy.tiers.<name>] table"),
        "{message}"
    );
    let message = error_of(&policy(
        "cost = 3\ntier = \"header:x-plan\"\n[policy.tiers.tiny]\ncapacity = 2\nrate = \"1/s\"",
    ));
    assert!(
        message.contains("above a capacity of this policy (2)"),
        "{message}"
    );
    let message = error_of(&policy("sources = []"));
    assert!(
        message.contains("`policy.sources` needs at least one source"),
        "{message}"
    );
    let message = error_of(&format!(
        "{BASE}\n[access]\nallow = [\"cidr:10.0.0.0/33\"]\n"
    ));
    assert!(
        message.starts_with("f.toml:10:10: `access.allow`"),
        "{message}"
    );
    let message = error_of(&format!(
        "{BASE}\n[identity.ip]\ntrusted_proxies = [\"everyone\"]\n"
    ));
    assert!(
        message.contains("`identity.ip.trusted_proxies`: `everyone` is not a network"),
        "{message}"
    );
}

#[test]
fn a_full_policy_is_read_and_global_shadow_applies_to_all() {
    let text = BASE.replace("threads = 2", "threads = 2\nshadow = true")
        + "\n[[policy]]\nname = \"sms\"\ncapacity = 1\nrate = \"1/m\"\nsources = [\"query:telephone\"]\n\
           match = { host = \"API.example.com\", path_prefix = \"/sendCaptcha\", methods = [\"post\"] }\n\
           tier = \"header:x-plan\"\n[policy.tiers.pro]\ncapacity = 5\nrate = \"5/m\"\n";
    let config = parse(&text, Path::new("f.toml")).unwrap();
    let policy = &config.policies[0];
    let limit = policy.limit().unwrap();
    assert!(policy.enforcement.is_shadow());
    assert_eq!(policy.route.host.as_deref(), Some("api.example.com"));
    assert_eq!(policy.route.methods, vec![http::Method::POST]);
    assert_eq!(
        limit.sources.as_ref().unwrap().sources[0].to_string(),
        "query:telephone"
    );
    assert_eq!(limit.tiers.as_ref().unwrap().levels[0].1.capacity(), 5);
    let printed = config.to_string();
    assert!(
        printed.contains("applies to POST host api.example.com path /sendCaptcha*"),
        "{printed}"
    );
    assert!(
        printed.contains("tiers by header:x-plan: pro = 5 at 5/m"),
        "{printed}"
    );
}

#[test]
fn the_forwarding_header_is_named_or_refused_where_it_stands() {
    let config = parse(
        &format!("{BASE}\n[identity.ip]\nheader = \"Forwarded\"\n"),
        Path::new("f.toml"),
    )
    .unwrap();
    assert_eq!(config.client_ip.header().to_string(), "forwarded");
    let message = error_of(&format!(
        "{BASE}\n[identity.ip]\nheader = \"x forwarded\"\n"
    ));
    assert!(
        message.starts_with("f.toml:10:10: `identity.ip.header`"),
        "{message}"
    );
}
