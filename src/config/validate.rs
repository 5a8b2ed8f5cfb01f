//! File structs → runtime config: every check that serde cannot make, each error located.

use super::check::Checker;
use super::error::ConfigError;
use super::file::{FileConfig, OnErrorFile, StoreFile, StoreKind, UpstreamFile};
use super::identity::{self, IdentityParts};
use super::policies;
use super::runtime::{AdminSettings, Config, ResponseSettings};
use super::server::server;
use crate::limiter::{OnError, RedisSettings, StoreSettings};
use crate::proxy::{Backend, UpstreamSettings};
use std::path::Path;
use std::time::Duration;
use toml::Spanned;

const DEFAULT_ADMIN_LISTEN: &str = "127.0.0.1:9090";
const DEFAULT_MAX_ENTRIES: i64 = 1_000_000;

/// Validates a parsed file into the runtime config.
pub(crate) fn validate(file: FileConfig, path: &Path, text: &str) -> Result<Config, ConfigError> {
    let mut check = Checker {
        path,
        text,
        jwt_configured: false,
    };
    let jwt = match &file.identity.jwt {
        Some(jwt) => Some(identity::jwt(&check, jwt)?),
        None => None,
    };
    check.jwt_configured = jwt.is_some();
    let admin_listen = match &file.admin.listen {
        Some(listen) => check.address(listen, "admin.listen")?,
        None => DEFAULT_ADMIN_LISTEN
            .parse()
            .expect("the default admin address is valid"),
    };
    let server = server(&check, &file.server)?;
    let IdentityParts {
        chain,
        client_ip,
        hash_key,
    } = identity::identity(&check, &file.identity)?;
    Ok(Config {
        path: path.to_owned(),
        admin: AdminSettings {
            listen: admin_listen,
            offenders_window: check.duration(
                file.admin.offenders_window.as_ref(),
                "admin.offenders_window",
                Duration::from_secs(60),
            )?,
            offenders_top: match &file.admin.offenders_top {
                Some(top) => check.integer(top, "admin.offenders_top", 1..=1000)? as usize,
                None => 20,
            },
        },
        upstream: upstream(&check, &file.upstream)?,
        store: store(&check, &file.store)?,
        policies: policies::policies(&check, &file.policies, &chain, server.shadow)?,
        identity: chain,
        hash_key,
        client_ip,
        jwt,
        access: identity::access(&check, &file.access)?,
        server,
        response: ResponseSettings {
            throttle_status: match &file.response.status {
                Some(status) => check.integer(status, "response.status", 400..=599)? as u16,
                None => 429,
            },
        },
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
        let (address, tls) = match text.split_once("://") {
            Some(("https", rest)) => (rest, true),
            Some(("http", rest)) => (rest, false),
            Some(_) => {
                let message = format!("`upstream.backends`: `{text}` must be host:port, http://host:port or https://host:port");
                return Err(check.error(backend, message));
            }
            None => (text.as_str(), false),
        };
        let Some(host) = backend_host(address) else {
            let message = format!("`upstream.backends`: `{text}` is not a host:port");
            return Err(check.error(backend, message));
        };
        let tls_name = tls.then(|| {
            host.trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned()
        });
        backends.push(Backend {
            address: address.to_owned(),
            tls_name,
        });
    }
    Ok(UpstreamSettings {
        backends,
        ca_file: file
            .ca_file
            .as_ref()
            .map(|c| readable(check, c, "upstream.ca_file"))
            .transpose()?,
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

/// The host of a `host:port` backend address, if it is one (checked by form only: names are
/// resolved when the server is built).
fn backend_host(address: &str) -> Option<&str> {
    let (host, port) = address.rsplit_once(':')?;
    let valid_host = !host.is_empty() && !host.contains(['/', ' ', '@']);
    (valid_host && port.parse::<u16>().is_ok_and(|p| p > 0)).then_some(host)
}

/// A file path that can be read, relative to the working directory.
pub(super) fn readable(
    check: &Checker<'_>,
    path: &Spanned<String>,
    key: &str,
) -> Result<String, ConfigError> {
    std::fs::metadata(path.get_ref())
        .map(|_| path.get_ref().clone())
        .map_err(|e| {
            check.error(
                path,
                format!("`{key}`: cannot read `{}`: {e}", path.get_ref()),
            )
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
    // Parsed only: the store connects when the server is built.
    let valid_url = |url: &Spanned<String>, key: &str| {
        use redis::IntoConnectionInfo;
        match url.get_ref().as_str().into_connection_info() {
            Ok(_) => Ok(url.get_ref().clone()),
            Err(_) => Err(check.error(url, format!("`{key}` must be a redis:// or rediss:// URL"))),
        }
    };
    let (url, nodes) = match (&file.url, &file.nodes) {
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
            let message = "`kind = \"redis\"` needs `store.url` (redis:// or rediss://) or `store.nodes` (cluster seeds)";
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
