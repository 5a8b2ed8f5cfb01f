//! File structs → runtime config: every check that serde cannot make, each error located.

use super::error::ConfigError;
use super::file::{
    FileConfig, IdentityFile, OnErrorFile, PolicyFile, ServerFile, StoreFile, StoreKind,
    UpstreamFile,
};
use super::runtime::{
    AdminSettings, Config, OnError, RedisSettings, ResponseSettings, ServerSettings, StoreSettings,
    UpstreamSettings,
};
use super::Rate;
use crate::identity::{IdentityChain, IpFolding, Source};
use crate::policy::Policy;
use std::collections::HashSet;
use std::net::{SocketAddr, ToSocketAddrs};
use std::ops::RangeInclusive;
use std::path::Path;
use std::time::Duration;
use toml::Spanned;

const DEFAULT_ADMIN_LISTEN: &str = "127.0.0.1:9090";
const DEFAULT_MAX_ENTRIES: i64 = 1_000_000;
/// The largest capacity or cost accepted: far beyond any real limit, small enough to stay
/// exact in the f64 arithmetic of the buckets.
const MAX_TOKENS: i64 = 1 << 40;

/// Checks values against the text they came from, so errors can say where.
struct Checker<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Checker<'_> {
    fn error<T>(&self, value: &Spanned<T>, message: String) -> ConfigError {
        ConfigError::at(self.path, self.text, Some(value.span()), message)
    }

    fn integer(
        &self,
        value: &Spanned<i64>,
        key: &str,
        range: RangeInclusive<i64>,
    ) -> Result<i64, ConfigError> {
        let n = *value.get_ref();
        if range.contains(&n) {
            Ok(n)
        } else {
            let (lo, hi) = (range.start(), range.end());
            Err(self.error(
                value,
                format!("`{key}` must be between {lo} and {hi}, not {n}"),
            ))
        }
    }

    fn address(&self, value: &Spanned<String>, key: &str) -> Result<SocketAddr, ConfigError> {
        value.get_ref().parse().map_err(|_| {
            let text = value.get_ref();
            self.error(
                value,
                format!("`{key}` must be an address like 127.0.0.1:8080, not `{text}`"),
            )
        })
    }

    fn duration(
        &self,
        value: Option<&Spanned<String>>,
        key: &str,
        default: Duration,
    ) -> Result<Duration, ConfigError> {
        let Some(value) = value else {
            return Ok(default);
        };
        humantime::parse_duration(value.get_ref()).map_err(|e| {
            self.error(
                value,
                format!("`{key}` must be a duration like 500ms or 30s: {e}"),
            )
        })
    }
}

/// Validates a parsed file into the runtime config.
pub(crate) fn validate(file: FileConfig, path: &Path, text: &str) -> Result<Config, ConfigError> {
    let check = Checker { path, text };
    let admin_listen = match &file.admin.listen {
        Some(listen) => check.address(listen, "admin.listen")?,
        None => DEFAULT_ADMIN_LISTEN
            .parse()
            .expect("the default admin address is valid"),
    };
    Ok(Config {
        path: path.to_owned(),
        server: server(&check, &file.server)?,
        admin: AdminSettings {
            listen: admin_listen,
        },
        upstream: upstream(&check, &file.upstream)?,
        store: store(&check, &file.store)?,
        identity: identity(&check, &file.identity)?,
        policies: policies(&check, &file.policies)?,
        response: ResponseSettings {
            throttle_status: match &file.response.status {
                Some(status) => check.integer(status, "response.status", 400..=599)? as u16,
                None => 429,
            },
        },
    })
}

fn server(check: &Checker<'_>, file: &ServerFile) -> Result<ServerSettings, ConfigError> {
    Ok(ServerSettings {
        listen: check.address(&file.listen, "server.listen")?,
        threads: match &file.threads {
            Some(threads) => check.integer(threads, "server.threads", 1..=1024)? as usize,
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        },
        grace_period: check.duration(
            file.grace_period.as_ref(),
            "server.grace_period",
            Duration::ZERO,
        )?,
        shutdown_timeout: check.duration(
            file.shutdown_timeout.as_ref(),
            "server.shutdown_timeout",
            Duration::from_secs(10),
        )?,
    })
}

fn upstream(check: &Checker<'_>, file: &UpstreamFile) -> Result<UpstreamSettings, ConfigError> {
    if file.backends.get_ref().is_empty() {
        return Err(check.error(
            &file.backends,
            "`upstream.backends` needs at least one backend".into(),
        ));
    }
    let mut backends = Vec::new();
    for backend in file.backends.get_ref() {
        let text = backend.get_ref();
        let resolves = text
            .to_socket_addrs()
            .map(|mut a| a.next().is_some())
            .unwrap_or(false);
        if !resolves {
            let message = format!("`upstream.backends`: `{text}` is not a reachable host:port");
            return Err(check.error(backend, message));
        }
        backends.push(text.clone());
    }
    Ok(UpstreamSettings {
        backends,
        connect_timeout: check.duration(
            file.connect_timeout.as_ref(),
            "upstream.connect_timeout",
            Duration::from_secs(5),
        )?,
        read_timeout: check.duration(
            file.read_timeout.as_ref(),
            "upstream.read_timeout",
            Duration::from_secs(60),
        )?,
        write_timeout: check.duration(
            file.write_timeout.as_ref(),
            "upstream.write_timeout",
            Duration::from_secs(60),
        )?,
    })
}

fn store(check: &Checker<'_>, file: &StoreFile) -> Result<StoreSettings, ConfigError> {
    let max_entries = match &file.max_entries {
        Some(n) => check.integer(n, "store.max_entries", 1..=1_000_000_000)?,
        None => DEFAULT_MAX_ENTRIES,
    } as usize;
    match &file.kind {
        Some(kind) if *kind.get_ref() == StoreKind::Redis => {
            redis_store(check, kind, file, max_entries).map(StoreSettings::Redis)
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
) -> Result<RedisSettings, ConfigError> {
    let Some(url) = &file.url else {
        let message = "`kind = \"redis\"` needs `store.url` (redis:// or rediss://)".to_owned();
        return Err(check.error(kind, message));
    };
    if redis::Client::open(url.get_ref().as_str()).is_err() {
        return Err(check.error(
            url,
            "`store.url` must be a redis:// or rediss:// URL".to_owned(),
        ));
    }
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
        url: url.get_ref().clone(),
        username: file.username.as_ref().map(|u| u.get_ref().clone()),
        password: file.password.as_ref().map(|p| p.get_ref().clone()),
        prefix,
        timeout: check.duration(file.timeout.as_ref(), "store.timeout", ms(5))?,
        on_error: match file.on_error {
            OnErrorFile::Allow => OnError::Allow,
            OnErrorFile::Deny => OnError::Deny,
            OnErrorFile::Local => OnError::Local,
        },
        breaker_failures: match &file.breaker_failures {
            Some(n) => check.integer(n, "store.breaker_failures", 1..=1_000_000)? as u32,
            None => 5,
        },
        breaker_probe_interval: check.duration(
            file.breaker_probe_interval.as_ref(),
            "store.breaker_probe_interval",
            ms(200),
        )?,
        deny_cache_entries: match &file.deny_cache_entries {
            Some(n) => check.integer(n, "store.deny_cache_entries", 0..=100_000_000)? as usize,
            None => 100_000,
        },
        ttl_margin: check.duration(file.ttl_margin.as_ref(), "store.ttl_margin", ms(1000))?,
        fallback_max_entries: max_entries,
    })
}

fn identity(check: &Checker<'_>, file: &IdentityFile) -> Result<IdentityChain, ConfigError> {
    let sources = match &file.sources {
        None => vec![Source::Ip],
        Some(list) if list.get_ref().is_empty() => {
            return Err(check.error(list, "`identity.sources` needs at least one source".into()));
        }
        Some(list) => list
            .get_ref()
            .iter()
            .map(|s| {
                s.get_ref()
                    .parse()
                    .map_err(|e| check.error(s, format!("`identity.sources`: {e}")))
            })
            .collect::<Result<_, _>>()?,
    };
    let prefix = |value: &Option<Spanned<i64>>, key: &str, max: i64, default: u8| match value {
        Some(v) => check.integer(v, key, 1..=max).map(|n| n as u8),
        None => Ok(default),
    };
    let ip = IpFolding {
        ipv4_prefix: prefix(&file.ip.ipv4_prefix, "identity.ip.ipv4_prefix", 32, 32)?,
        ipv6_prefix: prefix(&file.ip.ipv6_prefix, "identity.ip.ipv6_prefix", 128, 64)?,
    };
    Ok(IdentityChain { sources, ip })
}

fn policies(check: &Checker<'_>, files: &[PolicyFile]) -> Result<Vec<Policy>, ConfigError> {
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(files.len());
    for file in files {
        let policy = policy(check, file)?;
        if !seen.insert(policy.name.clone()) {
            let message = format!("`policy.name`: `{}` is used by two policies", policy.name);
            return Err(check.error(&file.name, message));
        }
        out.push(policy);
    }
    Ok(out)
}

fn policy(check: &Checker<'_>, file: &PolicyFile) -> Result<Policy, ConfigError> {
    let name = file.name.get_ref();
    let valid_name = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if !valid_name {
        let message =
            format!("`policy.name` must be 1 to 64 letters, digits, `-`, `_` or `.`, not `{name}`");
        return Err(check.error(&file.name, message));
    }
    let capacity = check.integer(&file.capacity, "policy.capacity", 1..=MAX_TOKENS)? as u64;
    let rate: Rate = file
        .rate
        .get_ref()
        .parse()
        .map_err(|e| check.error(&file.rate, format!("`policy.rate`: {e}")))?;
    let cost = match &file.cost {
        Some(cost) => check.integer(cost, "policy.cost", 1..=MAX_TOKENS)? as u64,
        None => 1,
    };
    if cost > capacity {
        let message = format!("`policy.cost` ({cost}) is above `policy.capacity` ({capacity}): no request could ever pass");
        let at = file
            .cost
            .as_ref()
            .expect("a cost above capacity was given explicitly");
        return Err(check.error(at, message));
    }
    Ok(Policy {
        name: name.as_str().into(),
        capacity,
        rate,
        cost,
        shadow: file.shadow,
    })
}
