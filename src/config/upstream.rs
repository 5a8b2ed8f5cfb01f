//! `[upstream]` with its `[upstream.health]` and `[upstream.pools.NAME]` tables, and the
//! `[[route]]` tables → the upstream settings: the pools (the default one, `upstream.backends`,
//! first) and the routes to them.

use super::check::Checker;
use super::error::ConfigError;
use super::value::{config_keys, BackendHeader, Period, PositivePeriod};
use crate::proxy::{Backend, Balance, PoolSettings, ScoreHeaders, UpstreamSettings, DEFAULT_POOL};
use health::{health, HealthFile, PoolHealth, UpstreamHealth};
pub(crate) use pool_line::PoolLine;
use routes::pool_routes;
pub(crate) use routes::RouteFile;
use serde::Deserialize;
use std::time::Duration;
use toml::Spanned;
use values::{HostName, PoolName};

config_keys! {
    ConnectTimeout = "upstream.connect_timeout",
    ReadTimeout = "upstream.read_timeout",
    WriteTimeout = "upstream.write_timeout",
    IdleTimeout = "upstream.idle_timeout",
    Host = "upstream.host",
    PoolHost = "upstream.pools.<name>.host",
    Ja4Header = "upstream.ja4_header",
    H2fpHeader = "upstream.h2fp_header",
    ScoreHeader = "upstream.score_header",
    SignalsHeader = "upstream.signals_header",
}

/// `[upstream]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpstreamFile {
    pub(crate) backends: Spanned<Vec<Spanned<String>>>,
    pub(crate) connect_timeout: Option<Period<ConnectTimeout>>,
    pub(crate) read_timeout: Option<Period<ReadTimeout>>,
    pub(crate) write_timeout: Option<Period<WriteTimeout>>,
    pub(crate) idle_timeout: Option<PositivePeriod<IdleTimeout>>,
    pub(crate) ca_file: Option<Spanned<String>>,
    pub(crate) balance: Option<BalanceFile>,
    pub(crate) host: Option<HostName<Host>>,
    pub(crate) health: Option<HealthFile<UpstreamHealth>>,
    #[serde(default)]
    pub(crate) pools: std::collections::BTreeMap<PoolName, PoolFile>,
    pub(crate) ja4_header: Option<BackendHeader<Ja4Header>>,
    pub(crate) h2fp_header: Option<BackendHeader<H2fpHeader>>,
    pub(crate) score_header: Option<BackendHeader<ScoreHeader>>,
    pub(crate) signals_header: Option<BackendHeader<SignalsHeader>>,
}

/// `[upstream.pools.NAME]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PoolFile {
    pub(crate) backends: Spanned<Vec<Spanned<String>>>,
    pub(crate) balance: Option<BalanceFile>,
    pub(crate) host: Option<HostName<PoolHost>>,
    pub(crate) ca_file: Option<Spanned<String>>,
    pub(crate) health: Option<HealthFile<PoolHealth>>,
}

/// `balance`: how a pool picks a backend.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum BalanceFile {
    #[default]
    RoundRobin,
    Hash,
}

/// The largest backend weight.
const MAX_WEIGHT: i64 = 100;

/// `upstream.connect_timeout` when not given.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// `upstream.read_timeout` and `write_timeout` when not given.
const IO_TIMEOUT: Duration = Duration::from_secs(60);
/// `upstream.idle_timeout` when not given.
const IDLE_TIMEOUT: Duration = Duration::from_secs(3600);

/// The upstream settings of `file` and the `routes` to its pools; no pools when there is no
/// `[upstream]` (an instance that only decides: `[check]` or `[rls]`).
pub(crate) fn upstream(
    check: &Checker<'_>,
    file: Option<&UpstreamFile>,
    routes: &[RouteFile],
) -> Result<UpstreamSettings, ConfigError> {
    let Some(file) = file else {
        return no_upstream(check, routes);
    };
    let ca_file = file
        .ca_file
        .as_ref()
        .map(|c| check.readable(c, "upstream.ca_file"))
        .transpose()?;
    let mut pools = vec![PoolSettings {
        name: DEFAULT_POOL.to_owned(),
        backends: backends(check, &file.backends, "upstream.backends")?,
        balance: balance(file.balance),
        host: file.host.as_ref().map(HostName::get),
        ca_file: ca_file.clone(),
        health: health(file.health.as_ref().map(HealthFile::given), None),
    }];
    for (name, pool) in &file.pools {
        pools.push(named_pool(check, name, pool, file, &ca_file)?);
    }
    Ok(UpstreamSettings {
        routes: pool_routes(check, routes, &pools)?,
        pools,
        ca_file,
        connect_timeout: file
            .connect_timeout
            .as_ref()
            .map_or(CONNECT_TIMEOUT, Period::get),
        read_timeout: file.read_timeout.as_ref().map_or(IO_TIMEOUT, Period::get),
        write_timeout: file.write_timeout.as_ref().map_or(IO_TIMEOUT, Period::get),
        idle_timeout: file
            .idle_timeout
            .as_ref()
            .map_or(IDLE_TIMEOUT, PositivePeriod::get),
        ja4_header: file.ja4_header.as_ref().map(BackendHeader::get),
        h2fp_header: file.h2fp_header.as_ref().map(BackendHeader::get),
        score_headers: ScoreHeaders {
            score: file.score_header.as_ref().map(BackendHeader::get),
            signals: file.signals_header.as_ref().map(BackendHeader::get),
        },
    })
}

/// No `[upstream]`: no pools, so no `[[route]]` may name one.
fn no_upstream(check: &Checker<'_>, routes: &[RouteFile]) -> Result<UpstreamSettings, ConfigError> {
    if let Some(route) = routes.first() {
        let message = "`route.pool`: a `[[route]]` picks a pool of `[upstream]`, and there is no `[upstream]`".to_owned();
        return Err(check.error(&route.pool, message));
    }
    Ok(UpstreamSettings {
        pools: Vec::new(),
        routes: Vec::new(),
        ca_file: None,
        connect_timeout: CONNECT_TIMEOUT,
        read_timeout: IO_TIMEOUT,
        write_timeout: IO_TIMEOUT,
        idle_timeout: IDLE_TIMEOUT,
        ja4_header: None,
        h2fp_header: None,
        score_headers: Default::default(),
    })
}

/// `[upstream.pools.NAME]`: its own keys, with `upstream.health` keys and `upstream.ca_file`
/// where it sets none.
fn named_pool(
    check: &Checker<'_>,
    name: &PoolName,
    file: &PoolFile,
    upstream: &UpstreamFile,
    ca_file: &Option<String>,
) -> Result<PoolSettings, ConfigError> {
    let key = format!("upstream.pools.{}", name.get());
    Ok(PoolSettings {
        name: name.get().to_owned(),
        backends: backends(check, &file.backends, &format!("{key}.backends"))?,
        balance: balance(file.balance),
        host: file.host.as_ref().map(HostName::get),
        ca_file: match &file.ca_file {
            Some(own) => Some(check.readable(own, &format!("{key}.ca_file"))?),
            None => ca_file.clone(),
        },
        health: health(
            file.health.as_ref().map(HealthFile::given),
            upstream.health.as_ref().map(HealthFile::given),
        ),
    })
}

fn balance(file: Option<BalanceFile>) -> Balance {
    match file.unwrap_or_default() {
        BalanceFile::RoundRobin => Balance::RoundRobin,
        BalanceFile::Hash => Balance::Hash,
    }
}

fn backends(
    check: &Checker<'_>,
    list: &Spanned<Vec<Spanned<String>>>,
    key: &str,
) -> Result<Vec<Backend>, ConfigError> {
    if list.get_ref().is_empty() {
        return Err(check.error(list, format!("`{key}` needs at least one backend")));
    }
    list.get_ref()
        .iter()
        .map(|b| backend(check, b, key))
        .collect()
}

/// `host:port`, `http://host:port`, `https://host:port` or `h2c://host:port`, optionally
/// followed by ` weight=N`.
fn backend(
    check: &Checker<'_>,
    entry: &Spanned<String>,
    key: &str,
) -> Result<Backend, ConfigError> {
    let text = entry.get_ref();
    let mut words = text.split_whitespace();
    let target = words.next().unwrap_or_default();
    let weight = match (words.next(), words.next()) {
        (None, _) => 1,
        (Some(w), None) => {
            match w.strip_prefix("weight=").map(str::parse::<i64>) {
                Some(Ok(n)) if (1..=MAX_WEIGHT).contains(&n) => n as usize,
                _ => {
                    let message = format!("`{key}`: `{text}`: a weight is written `weight=N`, N from 1 to {MAX_WEIGHT}");
                    return Err(check.error(entry, message));
                }
            }
        }
        _ => {
            let message =
                format!("`{key}`: `{text}` must be an address, optionally followed by weight=N");
            return Err(check.error(entry, message));
        }
    };
    let (address, tls, h2c) = match target.split_once("://") {
        Some(("https", rest)) => (rest, true, false),
        Some(("http", rest)) => (rest, false, false),
        Some(("h2c", rest)) => (rest, false, true),
        Some(_) => {
            let message = format!(
                "`{key}`: `{text}` must be host:port, http://host:port, https://host:port or h2c://host:port"
            );
            return Err(check.error(entry, message));
        }
        None => (target, false, false),
    };
    let Some(host) = backend_host(address) else {
        let message = format!("`{key}`: `{text}` is not a host:port");
        return Err(check.error(entry, message));
    };
    let tls_name = tls.then(|| {
        host.trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned()
    });
    Ok(Backend {
        address: address.to_owned(),
        tls_name,
        h2c,
        weight,
    })
}

/// The host of a `host:port` backend address, if it is one (checked by form only: names are
/// resolved when the server is built).
fn backend_host(address: &str) -> Option<&str> {
    let (host, port) = address.rsplit_once(':')?;
    let valid_host = !host.is_empty() && !host.contains(['/', ' ', '@']);
    (valid_host && port.parse::<u16>().is_ok_and(|p| p > 0)).then_some(host)
}

mod health;
mod pool_line;
mod routes;
#[cfg(test)]
mod tests;
mod values;
