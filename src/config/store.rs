//! `[store]`: where buckets live (the memory store, or Redis with its budget, breaker,
//! fallback and fleet settings), as written and as run, with the defaults and how `--test`
//! describes it. A key of `[store]` is added here (Sentinel's in `store/sentinel.rs`).

use super::check::Checker;
use super::error::ConfigError;
use super::value::{config_keys, Bounded, Fraction, Period, RedisUrl};
use crate::limiter::driver::BreakerSettings;
use crate::limiter::{OnError, RedisSettings, StoreSettings};
use sentinel::sentinel;
use serde::Deserialize;
use std::fmt;
use std::time::Duration;
use toml::Spanned;

config_keys! {
    MaxEntries = "store.max_entries",
    Url = "store.url",
    Timeout = "store.timeout",
    BreakerWindow = "store.breaker_window",
    BreakerMinCalls = "store.breaker_min_calls",
    BreakerFailureRatio = "store.breaker_failure_ratio",
    BreakerConsecutiveFailures = "store.breaker_consecutive_failures",
    BreakerProbeInterval = "store.breaker_probe_interval",
    FleetSize = "store.fleet_size",
    StartupWait = "store.startup_wait",
    LeaseFor = "store.lease_for",
    DenyCacheEntries = "store.deny_cache_entries",
    TtlMargin = "store.ttl_margin",
    InFlightLease = "store.in_flight_lease",
}

/// `store.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum StoreKind {
    Memory,
    Redis,
}

/// `store.on_error`: what a request gets when Redis cannot answer.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum OnErrorFile {
    Allow,
    Deny,
    #[default]
    Local,
}

/// `[store]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StoreFile {
    pub(crate) kind: Option<Spanned<StoreKind>>,
    pub(crate) max_entries: Option<Bounded<MaxEntries, 1, 1_000_000_000>>,
    pub(crate) url: Option<Spanned<RedisUrl<Url>>>,
    pub(crate) nodes: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) sentinels: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) sentinel_master: Option<Spanned<String>>,
    pub(crate) sentinel_username: Option<Spanned<String>>,
    pub(crate) sentinel_password: Option<Spanned<String>>,
    pub(crate) username: Option<Spanned<String>>,
    pub(crate) password: Option<Spanned<String>>,
    pub(crate) prefix: Option<Spanned<String>>,
    pub(crate) timeout: Option<Period<Timeout>>,
    #[serde(default)]
    pub(crate) on_error: OnErrorFile,
    pub(crate) breaker_window: Option<Period<BreakerWindow>>,
    pub(crate) breaker_min_calls: Option<Bounded<BreakerMinCalls, 1, 1_000_000>>,
    pub(crate) breaker_failure_ratio: Option<Fraction<BreakerFailureRatio>>,
    pub(crate) breaker_consecutive_failures:
        Option<Bounded<BreakerConsecutiveFailures, 1, 1_000_000>>,
    pub(crate) breaker_probe_interval: Option<Period<BreakerProbeInterval>>,
    pub(crate) fleet_size: Option<Bounded<FleetSize, 1, 10_000>>,
    pub(crate) startup_wait: Option<Period<StartupWait>>,
    pub(crate) lease_for: Option<Spanned<Period<LeaseFor>>>,
    pub(crate) deny_cache_entries: Option<Bounded<DenyCacheEntries, 0, 100_000_000>>,
    pub(crate) ttl_margin: Option<Period<TtlMargin>>,
    pub(crate) in_flight_lease: Option<Spanned<Period<InFlightLease>>>,
}

/// Buckets the memory store (or the fallback beside Redis) holds when `store.max_entries` is
/// not given.
const DEFAULT_MAX_ENTRIES: usize = 1_000_000;

/// The default budget of one store call. Chosen from measurements under contention
/// (docs/src/redis.md, "A slow answer is not a dead Redis"): on a busy 2-core machine a healthy Redis answers within a few ms but
/// can take tens of ms when it is starved of CPU; a call that misses the budget is decided by
/// `on_error`, so the budget must cover a busy machine, not an idle one.
const DEFAULT_TIMEOUT: Duration = Duration::from_millis(250);

/// The longest a hot caller's lease may last.
const MAX_LEASE_FOR: Duration = Duration::from_secs(10);

/// The shortest `store.in_flight_lease`.
const MIN_IN_FLIGHT_LEASE: Duration = Duration::from_millis(100);

/// A key's value from `file`, or `default` when it is not written.
fn or<T, V>(value: &Option<T>, default: V, get: impl FnOnce(&T) -> V) -> V {
    value.as_ref().map_or(default, get)
}

/// `[store]`; `read_timeout` (the upstream's) sets the default concurrency lease.
pub(crate) fn store(
    check: &Checker<'_>,
    file: &StoreFile,
    read_timeout: Duration,
) -> Result<StoreSettings, ConfigError> {
    let max_entries = or(&file.max_entries, DEFAULT_MAX_ENTRIES, Bounded::count);
    match &file.kind {
        Some(kind) if *kind.get_ref() == StoreKind::Redis => {
            redis_store(check, kind, file, max_entries, read_timeout).map(StoreSettings::Redis)
        }
        _ => {
            if let Some(url) = &file.url {
                let message = "`store.url` needs `kind = \"redis\"`".to_owned();
                return Err(check.error(url, message));
            }
            Ok(StoreSettings::Memory { max_entries })
        }
    }
}

/// `store.url`, `store.nodes` or the sentinels: where Redis is.
fn servers(
    check: &Checker<'_>,
    kind: &Spanned<StoreKind>,
    file: &StoreFile,
    sentinel: bool,
) -> Result<(String, Vec<String>), ConfigError> {
    let both = "give `store.sentinels` or `store.url` / `store.nodes`, not both";
    match (&file.url, &file.nodes) {
        (None, None) if sentinel => Ok((String::new(), Vec::new())),
        (Some(url), _) if sentinel => Err(check.error(url, both.into())),
        (None, Some(nodes)) if sentinel => Err(check.error(nodes, both.into())),
        (Some(url), None) => Ok((url.get_ref().get(), Vec::new())),
        (None, Some(nodes)) if !nodes.get_ref().is_empty() => {
            let nodes = nodes.get_ref().iter();
            let urls = nodes.map(|n| check.redis_url(n, "store.nodes"));
            Ok((String::new(), urls.collect::<Result<_, _>>()?))
        }
        (Some(url), Some(_)) => Err(check.error(
            url,
            "give `store.url` (one server) or `store.nodes` (a cluster), not both".into(),
        )),
        _ => {
            let message = "`kind = \"redis\"` needs `store.url` (redis:// or rediss://), `store.nodes` (cluster seeds) or `store.sentinels` with `store.sentinel_master`";
            Err(check.error(kind, message.to_owned()))
        }
    }
}

/// `store.prefix`, `floodgate` by default: non-empty, without braces.
fn prefix(check: &Checker<'_>, file: &StoreFile) -> Result<String, ConfigError> {
    let Some(prefix) = &file.prefix else {
        return Ok("floodgate".to_owned());
    };
    let text = prefix.get_ref();
    if text.is_empty() || text.contains(['{', '}']) {
        let message = "`store.prefix` must be non-empty and hold no `{` or `}`";
        return Err(check.error(prefix, message.to_owned()));
    }
    Ok(text.clone())
}

fn redis_store(
    check: &Checker<'_>,
    kind: &Spanned<StoreKind>,
    file: &StoreFile,
    max_entries: usize,
    read_timeout: Duration,
) -> Result<RedisSettings, ConfigError> {
    let sentinel = sentinel(check, file)?;
    let (url, nodes) = servers(check, kind, file, sentinel.is_some())?;
    Ok(RedisSettings {
        url,
        nodes,
        sentinel,
        username: file.username.as_ref().map(|u| u.get_ref().clone()),
        password: file.password.as_ref().map(|p| p.get_ref().clone()),
        prefix: prefix(check, file)?,
        timeout: or(&file.timeout, DEFAULT_TIMEOUT, Period::get),
        on_error: match file.on_error {
            OnErrorFile::Allow => OnError::Allow,
            OnErrorFile::Deny => OnError::Deny,
            OnErrorFile::Local => OnError::Local,
        },
        breaker: breaker(file),
        fleet_size: file.fleet_size.as_ref().map(|n| n.count() as u32),
        startup_wait: or(&file.startup_wait, Duration::from_secs(5), Period::get),
        lease_for: lease_for(check, file)?,
        deny_cache_entries: or(&file.deny_cache_entries, 100_000, Bounded::count),
        ttl_margin: or(&file.ttl_margin, Duration::from_secs(1), Period::get),
        fallback_max_entries: max_entries,
        in_flight_lease: in_flight_lease(check, file, read_timeout)?,
    })
}

/// `store.in_flight_lease`: how long the concurrency slots of an instance that died linger in
/// Redis (a live request's slot is renewed every third of it, however long the request
/// runs); by default `upstream.read_timeout` + 5 s.
fn in_flight_lease(
    check: &Checker<'_>,
    file: &StoreFile,
    read_timeout: Duration,
) -> Result<Duration, ConfigError> {
    let Some(at) = &file.in_flight_lease else {
        return Ok(read_timeout.saturating_add(Duration::from_secs(5)));
    };
    let lease = at.get_ref().get();
    if lease < MIN_IN_FLIGHT_LEASE {
        let message = format!("`store.in_flight_lease` must be at least 100ms, not {lease:?}");
        return Err(check.error(at, message));
    }
    Ok(lease)
}

/// The breaker keys of `[store]`, each defaulting to [`BreakerSettings::default`].
fn breaker(file: &StoreFile) -> BreakerSettings {
    let defaults = BreakerSettings::default();
    BreakerSettings {
        window: or(&file.breaker_window, defaults.window, Period::get),
        min_calls: or(&file.breaker_min_calls, defaults.min_calls, |n| {
            n.count() as u32
        }),
        failure_ratio: or(
            &file.breaker_failure_ratio,
            defaults.failure_ratio,
            Fraction::get,
        ),
        consecutive_failures: or(
            &file.breaker_consecutive_failures,
            defaults.consecutive_failures,
            |n| n.count() as u32,
        ),
        cooldown: or(&file.breaker_probe_interval, defaults.cooldown, Period::get),
    }
}

/// `store.lease_for`: how long a hot caller's lease lasts, at most 10 s (0 turns leasing off).
fn lease_for(check: &Checker<'_>, file: &StoreFile) -> Result<Duration, ConfigError> {
    let Some(at) = &file.lease_for else {
        return Ok(Duration::from_secs(1));
    };
    let lease = at.get_ref().get();
    if lease > MAX_LEASE_FOR {
        return Err(check.error(at, "`store.lease_for` must be at most 10s".into()));
    }
    Ok(lease)
}

/// `--test`'s lines for the store.
pub(crate) struct StoreLines<'a>(pub(crate) &'a StoreSettings);

impl fmt::Display for StoreLines<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = match self.0 {
            StoreSettings::Memory { max_entries } => {
                return writeln!(f, "store           memory, at most {max_entries} buckets");
            }
            StoreSettings::Redis(r) => r,
        };
        writeln!(
            f,
            "store           redis {} (keys {}:{{identity}}:policy)",
            r.redacted_url(),
            r.prefix
        )?;
        writeln!(
            f,
            "                budget {:?}, on error {}, breaker at {:.0} % failed of at least {} calls in {:?}, else {} in a row (probes after {:?})",
            r.timeout, r.on_error.as_str(), r.breaker.failure_ratio * 100.0,
            r.breaker.min_calls, r.breaker.window, r.breaker.consecutive_failures,
            r.breaker.cooldown
        )?;
        writeln!(
            f,
            "                deny cache {} entries, key expiry margin {:?}, concurrency leases {:?}",
            r.deny_cache_entries, r.ttl_margin, r.in_flight_lease
        )?;
        match r.fleet_size {
            Some(n) => writeln!(f, "                fleet of {n} instances (pinned)"),
            None => writeln!(f, "                fleet size learned from Redis"),
        }
    }
}

mod sentinel;

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use crate::limiter::StoreSettings;
    use std::path::Path;
    use std::time::Duration;

    const BASE: &str =
        "[server]\nlisten = \"127.0.0.1:8080\"\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n";

    #[test]
    fn store_defaults_hold_on_a_busy_machine_and_breaker_keys_are_checked() {
        let text = format!("{BASE}[store]\nkind = \"redis\"\nurl = \"redis://127.0.0.1:6379\"\n");
        let config = parse(&text, Path::new("f.toml")).unwrap();
        let StoreSettings::Redis(redis) = &config.store else {
            panic!("a redis store");
        };
        assert_eq!(redis.timeout, Duration::from_millis(250));
        assert_eq!(redis.breaker.min_calls, 20);
        assert_eq!(redis.breaker.consecutive_failures, 5);
        assert_eq!(redis.fleet_size, None);
        assert_eq!(redis.lease_for, Duration::from_secs(1));
        let bad = format!(
            "{BASE}[store]\nkind = \"redis\"\nurl = \"redis://h:1\"\nbreaker_failure_ratio = 1.5\n"
        );
        let error = parse(&bad, Path::new("f.toml")).unwrap_err().to_string();
        assert!(error.starts_with("f.toml:8:"), "{error}");
        assert!(
            error.contains("`store.breaker_failure_ratio` must be above 0"),
            "{error}"
        );
    }

    /// The error of [`BASE`] with a Redis `[store]` of `keys` (on line 7 on).
    fn error_of(keys: &str) -> String {
        let text = format!("{BASE}[store]\nkind = \"redis\"\n{keys}\n");
        parse(&text, Path::new("f.toml")).unwrap_err().to_string()
    }

    #[test]
    fn each_mistake_is_located_at_its_value_and_names_its_key() {
        let cases = [
            (
                "url = \"http://h\"",
                "f.toml:7:7: `store.url` must be a redis:// or rediss:// URL",
            ),
            (
                "nodes = [\"redis://a:1\", \"b:2\"]",
                "f.toml:7:25: `store.nodes` must be a redis:// or rediss:// URL",
            ),
            (
                "sentinels = [\"x\"]\nsentinel_master = \"m\"",
                "f.toml:7:14: `store.sentinels` must be a redis:// or rediss:// URL",
            ),
            (
                "url = \"redis://h:1\"\nfleet_size = 0",
                "f.toml:8:14: `store.fleet_size` must be between 1 and 10000, not 0",
            ),
            (
                "url = \"redis://h:1\"\nlease_for = \"11s\"",
                "f.toml:8:13: `store.lease_for` must be at most 10s",
            ),
            (
                "url = \"redis://h:1\"\nin_flight_lease = \"50ms\"",
                "f.toml:8:19: `store.in_flight_lease` must be at least 100ms, not 50ms",
            ),
            (
                "url = \"redis://h:1\"\ntimeout = 5",
                "f.toml:8:11: invalid type: integer `5`, expected a string",
            ),
        ];
        for (keys, message) in cases {
            assert_eq!(error_of(keys), message, "{keys}");
        }
    }
}
