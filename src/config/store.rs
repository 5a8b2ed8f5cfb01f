//! `[store]` → where buckets live: the memory store, or Redis with its budget, breaker,
//! fallback and fleet settings.

use super::check::Checker;
use super::error::ConfigError;
use crate::limiter::driver::BreakerSettings;
use crate::limiter::{OnError, RedisSettings, StoreSettings};
use sentinel::sentinel;
use serde::Deserialize;
use std::time::Duration;
use toml::Spanned;

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
    pub(crate) max_entries: Option<Spanned<i64>>,
    pub(crate) url: Option<Spanned<String>>,
    pub(crate) nodes: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) sentinels: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) sentinel_master: Option<Spanned<String>>,
    pub(crate) sentinel_username: Option<Spanned<String>>,
    pub(crate) sentinel_password: Option<Spanned<String>>,
    pub(crate) username: Option<Spanned<String>>,
    pub(crate) password: Option<Spanned<String>>,
    pub(crate) prefix: Option<Spanned<String>>,
    pub(crate) timeout: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) on_error: OnErrorFile,
    pub(crate) breaker_window: Option<Spanned<String>>,
    pub(crate) breaker_min_calls: Option<Spanned<i64>>,
    pub(crate) breaker_failure_ratio: Option<Spanned<f64>>,
    pub(crate) breaker_consecutive_failures: Option<Spanned<i64>>,
    pub(crate) breaker_probe_interval: Option<Spanned<String>>,
    pub(crate) fleet_size: Option<Spanned<i64>>,
    pub(crate) startup_wait: Option<Spanned<String>>,
    pub(crate) lease_for: Option<Spanned<String>>,
    pub(crate) deny_cache_entries: Option<Spanned<i64>>,
    pub(crate) ttl_margin: Option<Spanned<String>>,
    pub(crate) in_flight_lease: Option<Spanned<String>>,
}

const DEFAULT_MAX_ENTRIES: i64 = 1_000_000;

/// The default budget of one store call. Chosen from measurements under contention
/// (docs/src/redis.md, "A slow answer is not a dead Redis"): on a busy 2-core machine a healthy Redis answers within a few ms but
/// can take tens of ms when it is starved of CPU; a call that misses the budget is decided by
/// `on_error`, so the budget must cover a busy machine, not an idle one.
const DEFAULT_TIMEOUT: Duration = Duration::from_millis(250);

/// `[store]`; `read_timeout` (the upstream's) sets the default concurrency lease.
pub(crate) fn store(
    check: &Checker<'_>,
    file: &StoreFile,
    read_timeout: Duration,
) -> Result<StoreSettings, ConfigError> {
    let max_entries = match &file.max_entries {
        Some(n) => check.integer(n, "store.max_entries", 1..=1_000_000_000)?,
        None => DEFAULT_MAX_ENTRIES,
    } as usize;
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

fn redis_store(
    check: &Checker<'_>,
    kind: &Spanned<StoreKind>,
    file: &StoreFile,
    max_entries: usize,
    read_timeout: Duration,
) -> Result<RedisSettings, ConfigError> {
    let valid_url = |url: &Spanned<String>, key: &str| check.redis_url(url, key);
    let sentinel = sentinel(check, file)?;
    let (url, nodes) = match (&file.url, &file.nodes) {
        (None, None) if sentinel.is_some() => (String::new(), Vec::new()),
        (Some(url), _) if sentinel.is_some() => {
            let message = "give `store.sentinels` or `store.url` / `store.nodes`, not both";
            return Err(check.error(url, message.into()));
        }
        (None, Some(nodes)) if sentinel.is_some() => {
            let message = "give `store.sentinels` or `store.url` / `store.nodes`, not both";
            return Err(check.error(nodes, message.into()));
        }
        (Some(url), None) => (valid_url(url, "store.url")?, Vec::new()),
        (None, Some(nodes)) if !nodes.get_ref().is_empty() => {
            let nodes = nodes
                .get_ref()
                .iter()
                .map(|n| valid_url(n, "store.nodes"))
                .collect::<Result<_, _>>()?;
            (String::new(), nodes)
        }
        (Some(url), Some(_)) => {
            return Err(check.error(
                url,
                "give `store.url` (one server) or `store.nodes` (a cluster), not both".into(),
            ));
        }
        _ => {
            let message = "`kind = \"redis\"` needs `store.url` (redis:// or rediss://), `store.nodes` (cluster seeds) or `store.sentinels` with `store.sentinel_master`";
            return Err(check.error(kind, message.to_owned()));
        }
    };
    let prefix = file
        .prefix
        .as_ref()
        .map_or("floodgate".to_owned(), |p| p.get_ref().clone());
    if prefix.is_empty() || prefix.contains(['{', '}']) {
        let at = file
            .prefix
            .as_ref()
            .expect("only a given prefix can be invalid");
        return Err(check.error(
            at,
            "`store.prefix` must be non-empty and hold no `{` or `}`".to_owned(),
        ));
    }
    let ms = Duration::from_millis;
    Ok(RedisSettings {
        url,
        nodes,
        sentinel,
        username: file.username.as_ref().map(|u| u.get_ref().clone()),
        password: file.password.as_ref().map(|p| p.get_ref().clone()),
        prefix,
        timeout: check.duration(file.timeout.as_ref(), "store.timeout", DEFAULT_TIMEOUT)?,
        on_error: match file.on_error {
            OnErrorFile::Allow => OnError::Allow,
            OnErrorFile::Deny => OnError::Deny,
            OnErrorFile::Local => OnError::Local,
        },
        breaker: breaker(check, file)?,
        fleet_size: match &file.fleet_size {
            Some(n) => Some(check.integer(n, "store.fleet_size", 1..=10_000)? as u32),
            None => None,
        },
        startup_wait: check.duration(
            file.startup_wait.as_ref(),
            "store.startup_wait",
            Duration::from_secs(5),
        )?,
        lease_for: lease_for(check, file)?,
        deny_cache_entries: match &file.deny_cache_entries {
            Some(n) => check.integer(n, "store.deny_cache_entries", 0..=100_000_000)? as usize,
            None => 100_000,
        },
        ttl_margin: check.duration(file.ttl_margin.as_ref(), "store.ttl_margin", ms(1000))?,
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
    let default = read_timeout.saturating_add(Duration::from_secs(5));
    let lease = check.duration(
        file.in_flight_lease.as_ref(),
        "store.in_flight_lease",
        default,
    )?;
    match (&file.in_flight_lease, lease < Duration::from_millis(100)) {
        (Some(at), true) => Err(check.error(
            at,
            format!("`store.in_flight_lease` must be at least 100ms, not {lease:?}"),
        )),
        _ => Ok(lease),
    }
}

/// The breaker keys of `[store]`, each defaulting to [`BreakerSettings::default`].
fn breaker(check: &Checker<'_>, file: &StoreFile) -> Result<BreakerSettings, ConfigError> {
    let defaults = BreakerSettings::default();
    let failure_ratio = match &file.breaker_failure_ratio {
        Some(r) if *r.get_ref() > 0.0 && *r.get_ref() <= 1.0 => *r.get_ref(),
        Some(r) => {
            let message = format!(
                "`store.breaker_failure_ratio` must be above 0 and at most 1, not {}",
                r.get_ref()
            );
            return Err(check.error(r, message));
        }
        None => defaults.failure_ratio,
    };
    Ok(BreakerSettings {
        window: check.duration(
            file.breaker_window.as_ref(),
            "store.breaker_window",
            defaults.window,
        )?,
        min_calls: match &file.breaker_min_calls {
            Some(n) => check.integer(n, "store.breaker_min_calls", 1..=1_000_000)? as u32,
            None => defaults.min_calls,
        },
        failure_ratio,
        consecutive_failures: match &file.breaker_consecutive_failures {
            Some(n) => {
                check.integer(n, "store.breaker_consecutive_failures", 1..=1_000_000)? as u32
            }
            None => defaults.consecutive_failures,
        },
        cooldown: check.duration(
            file.breaker_probe_interval.as_ref(),
            "store.breaker_probe_interval",
            defaults.cooldown,
        )?,
    })
}

/// `store.lease_for`: how long a hot caller's lease lasts, at most 10 s (0 turns leasing off).
fn lease_for(check: &Checker<'_>, file: &StoreFile) -> Result<Duration, ConfigError> {
    let lease = check.duration(
        file.lease_for.as_ref(),
        "store.lease_for",
        Duration::from_secs(1),
    )?;
    match (lease <= Duration::from_secs(10), &file.lease_for) {
        (true, _) | (false, None) => Ok(lease),
        (false, Some(at)) => Err(check.error(at, "`store.lease_for` must be at most 10s".into())),
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
}
