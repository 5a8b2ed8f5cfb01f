//! Tests of the `[upstream]`, pool, health and `[[route]]` parsing.

use crate::config::{parse, Config, ConfigError};
use crate::proxy::{Balance, DEFAULT_POOL};
use std::path::Path;
use std::time::Duration;

const BASE: &str =
    "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n";

fn load(extra: &str) -> Result<Config, ConfigError> {
    parse(&format!("{BASE}{extra}"), Path::new("f.toml"))
}

fn error_of(extra: &str) -> String {
    load(extra).expect_err("the config is refused").to_string()
}

#[test]
fn without_health_tables_only_passive_ejection_runs() {
    let config = load("").unwrap();
    let pool = &config.upstream.pools[0];
    assert_eq!(pool.name, DEFAULT_POOL);
    assert_eq!(pool.balance, Balance::RoundRobin);
    assert!(pool.health.active.is_none());
    assert_eq!(pool.health.eject_after, 5);
    assert_eq!(pool.health.eject_for, Duration::from_secs(10));
}

#[test]
fn health_defaults_and_pool_overrides() {
    let config = load(
        "[upstream.health]\ninterval = \"2s\"\n\n\
         [upstream.pools.api]\nbackends = [\"10.0.0.1:80 weight=3\", \"https://api.internal:443\"]\n\
         balance = \"hash\"\nhost = \"api.internal\"\nhealth = { path = \"/healthz\", unhealthy_after = 5 }\n",
    )
    .unwrap();
    let default = config.upstream.pools[0].health.active.clone().unwrap();
    assert_eq!(default.path, "/");
    assert_eq!(default.interval, Duration::from_secs(2));
    assert_eq!(default.timeout, Duration::from_secs(1));
    assert_eq!((default.unhealthy_after, default.healthy_after), (3, 2));
    let api = &config.upstream.pools[1];
    assert_eq!(api.balance, Balance::Hash);
    assert_eq!(api.host.as_deref(), Some("api.internal"));
    assert_eq!(api.backends[0].weight, 3);
    assert_eq!(api.backends[1].tls_name.as_deref(), Some("api.internal"));
    let check = api.health.active.clone().unwrap();
    assert_eq!(check.path, "/healthz");
    assert_eq!(check.interval, Duration::from_secs(2), "inherited");
    assert_eq!(check.unhealthy_after, 5, "its own");
}

#[test]
fn active_false_keeps_only_passive_ejection() {
    let config = load("[upstream.health]\nactive = false\neject_after = 2\n").unwrap();
    let health = &config.upstream.pools[0].health;
    assert!(health.active.is_none());
    assert_eq!(health.eject_after, 2);
}

#[test]
fn routes_name_pools_first_match_first() {
    let config = load(
        "[upstream.pools.api]\nbackends = [\"127.0.0.1:8001\"]\n\n\
         [[route]]\nmatch = { path_prefix = \"/api/\" }\npool = \"api\"\n\n\
         [[route]]\nmatch = { host = \"Static.Example.com\" }\npool = \"default\"\n",
    )
    .unwrap();
    let routes = &config.upstream.routes;
    assert_eq!(routes.len(), 2);
    assert_eq!((routes[0].pool, routes[1].pool), (1, 0));
    assert_eq!(routes[1].route.host.as_deref(), Some("static.example.com"));
}

#[test]
fn an_unknown_pool_is_located() {
    let message = error_of("\n[[route]]\nmatch = { path_prefix = \"/api/\" }\npool = \"apj\"\n");
    assert!(
        message.starts_with("f.toml:9:8: `route.pool`: no pool named `apj` (pools: default)"),
        "{message}"
    );
}

#[test]
fn bad_values_are_located() {
    let cases = [
        (
            "[upstream.health]\ninterval = \"0s\"\n",
            "f.toml:7:12: `upstream.health.interval` must be above zero",
        ),
        (
            "[upstream.health]\npath = \"healthz\"\n",
            "f.toml:7:8: `upstream.health.path` must be a path",
        ),
        (
            "[upstream.pools.default]\nbackends = [\"127.0.0.1:1\"]\n",
            "f.toml:6:17: `upstream.pools`: `default` is the pool of `upstream.backends`",
        ),
        (
            "[upstream.pools]\n\"a b\" = { backends = [\"127.0.0.1:1\"] }\n",
            "f.toml:7:1: `upstream.pools`: a pool name is 1 to 64 letters, digits, `-`, `_` or `.`, \
             not `a b`",
        ),
        (
            "[upstream.pools.x]\nbackends = [\"127.0.0.1:1 weight=0\"]\n",
            "f.toml:7:13: `upstream.pools.x.backends`: `127.0.0.1:1 weight=0`: a weight",
        ),
        (
            "[upstream.pools.x]\nbackends = [\"127.0.0.1:1\"]\nbalance = \"random\"\n",
            "f.toml:8:11: unknown variant `random`",
        ),
        (
            "[upstream.pools.x]\nbackends = [\"127.0.0.1:1\"]\nhealth = { unhealthy_after = 0 }\n",
            "f.toml:8:30: `upstream.pools.<name>.health.unhealthy_after` must be between 1 and \
             1000, not 0",
        ),
        (
            "[upstream.pools.x]\nbackends = [\"127.0.0.1:1\"]\nhealth = { eject_for = \"0s\" }\n",
            "f.toml:8:24: `upstream.pools.<name>.health.eject_for` must be above zero",
        ),
        (
            "[upstream.pools.x]\nbackends = [\"127.0.0.1:1\"]\nhost = \"a/b\"\n",
            "f.toml:8:8: `upstream.pools.<name>.host` must be a host name like api.internal",
        ),
        (
            "host = \"\"\n",
            "f.toml:6:8: `upstream.host` must be a host name like api.internal",
        ),
        (
            "[upstream.health]\nactive = false\neject_after = 1001\n",
            "f.toml:8:15: `upstream.health.eject_after` must be between 0 and 1000, not 1001",
        ),
        (
            "[[route]]\nmatch = { methods = [\"G T\"] }\npool = \"default\"\n",
            "f.toml:7:22: `route.match.methods`: `G T` is not a method",
        ),
    ];
    for (extra, expected) in cases {
        let message = error_of(extra);
        assert!(
            message.starts_with(expected),
            "{message}\nwanted: {expected}"
        );
    }
}

#[test]
fn h2c_backends_and_the_idle_timeout() {
    let config = load("").unwrap();
    assert_eq!(config.upstream.idle_timeout, Duration::from_secs(3600));
    let text = "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\n\
                backends = [\"h2c://127.0.0.1:50051\", \"https://a.internal:443\"]\n\
                idle_timeout = \"10m\"\n";
    let config = parse(text, Path::new("f.toml")).unwrap();
    let backends = &config.upstream.pools[0].backends;
    assert!(backends[0].h2c && backends[0].tls_name.is_none());
    assert!(!backends[1].h2c && backends[1].tls_name.is_some());
    assert_eq!(config.upstream.idle_timeout, Duration::from_secs(600));
    assert!(
        error_of("idle_timeout = \"0s\"\n").contains("`upstream.idle_timeout` must be above zero")
    );
    let text = text.replace("h2c://", "ws://");
    let e = parse(&text, Path::new("f.toml")).unwrap_err().to_string();
    assert!(e.contains("h2c://host:port"), "{e}");
}

#[test]
fn a_timeout_that_is_no_duration_is_located_at_its_value() {
    assert_eq!(
        error_of("read_timeout = \"long\"\n"),
        "f.toml:6:16: `upstream.read_timeout` must be a duration like 500ms or 30s: expected \
         number at 0"
    );
}

/// The score headers of `[upstream]` with `keys`.
fn read_score_headers(keys: &str) -> Result<crate::proxy::ScoreHeaders, String> {
    load(&format!("{keys}\n"))
        .map(|c| c.upstream.score_headers.clone())
        .map_err(|e| e.to_string())
}

#[test]
fn score_headers_are_read_and_http_s_own_names_refused_where_they_stand() {
    let headers =
        read_score_headers("score_header = \"X-Bot-Score\"\nsignals_header = \"x-bot-signals\"")
            .unwrap();
    assert_eq!(headers.score.unwrap().as_str(), "x-bot-score");
    assert_eq!(headers.signals.unwrap().as_str(), "x-bot-signals");
    for (keys, says) in [
        (
            "score_header = \"Host\"",
            "`upstream.score_header`: `Host` has another use",
        ),
        (
            "signals_header = \"via\"",
            "`upstream.signals_header`: `via` has another use",
        ),
        ("score_header = \"a b\"", "must be a header name"),
        (
            "ja4_header = \"X-Forwarded-For\"",
            "f.toml:6:14: `upstream.ja4_header`: `X-Forwarded-For` has another use; name another \
             header",
        ),
        (
            "h2fp_header = \"ratelimit-policy\"",
            "f.toml:6:15: `upstream.h2fp_header`: `ratelimit-policy` has another use",
        ),
    ] {
        let error = read_score_headers(keys).unwrap_err();
        assert!(error.contains(says), "{keys}: {error}");
        assert!(error.starts_with("f.toml:"), "located: {error}");
    }
}
