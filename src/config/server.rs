//! `[server]`: the listeners, workers, shutdown, and the limits on downstream connections,
//! as written, and their conversion into the settings (`settings.rs`, with the defaults and
//! `--test`'s lines). A key of `[server]` is added in these two files.

use super::check::Checker;
use super::error::ConfigError;
use super::upstream::UpstreamFile;
use super::value::{config_keys, Address, BackendHeader, Bounded, Period};

use crate::proxy::{AccessLogSettings, ConnectionLimits, FrontSettings, LogFormat};
use serde::Deserialize;
pub use settings::{ServerSettings, TlsFiles, TlsListener};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use toml::Spanned;

config_keys! {
    Listen = "server.listen",
    Threads = "server.threads",
    GracePeriod = "server.grace_period",
    ShutdownTimeout = "server.shutdown_timeout",
    TlsListen = "server.tls_listen",
    HeaderTimeout = "server.header_timeout",
    KeepaliveTimeout = "server.keepalive_timeout",
    MaxHeaderBytes = "server.max_header_bytes",
    MaxConnections = "server.max_connections",
    RequestIdHeader = "server.request_id_header",
}

/// The largest head a request may have (Pingora itself refuses heads past 1 MiB).
const MAX_HEADER_BYTES: i64 = 1_048_575;

/// `[server]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServerFile {
    pub(crate) listen: Option<Spanned<Address<Listen>>>,
    pub(crate) threads: Option<Bounded<Threads, 1, 1024>>,
    pub(crate) grace_period: Option<Period<GracePeriod>>,
    pub(crate) shutdown_timeout: Option<Period<ShutdownTimeout>>,
    #[serde(default)]
    pub(crate) shadow: bool,
    #[serde(default)]
    pub(crate) access_log: bool,
    pub(crate) access_log_format: Option<Spanned<String>>,
    pub(crate) access_log_file: Option<String>,
    #[serde(default)]
    pub(crate) watch_config: bool,
    pub(crate) pid_file: Option<Spanned<String>>,
    pub(crate) upgrade_sock: Option<String>,
    pub(crate) tls_listen: Option<Address<TlsListen>>,
    pub(crate) tls_cert_file: Option<Spanned<String>>,
    pub(crate) tls_key_file: Option<Spanned<String>>,
    pub(crate) tls_ja4: Option<bool>,
    pub(crate) header_timeout: Option<Spanned<Period<HeaderTimeout>>>,
    pub(crate) keepalive_timeout: Option<Period<KeepaliveTimeout>>,
    pub(crate) max_header_bytes: Option<Bounded<MaxHeaderBytes, 1024, MAX_HEADER_BYTES>>,
    pub(crate) max_connections: Option<Bounded<MaxConnections, 1, 10_000_000>>,
    pub(crate) max_connections_per_ip: Option<Spanned<i64>>,
    #[serde(default)]
    pub(crate) h2c: bool,
    pub(crate) h2: Option<bool>,
    #[serde(default)]
    pub(crate) via: bool,
    #[serde(default)]
    pub(crate) preserve_header_case: bool,
    pub(crate) request_id_header: Option<BackendHeader<RequestIdHeader>>,
}

/// The validated `[server]` table; the proxy listens only when there is an `[upstream]`.
pub(super) fn server(
    check: &Checker<'_>,
    file: &ServerFile,
    upstream: Option<&UpstreamFile>,
) -> Result<ServerSettings, ConfigError> {
    let default = ServerSettings::defaults_for(check.path);
    Ok(ServerSettings {
        listen: listen(check, file, upstream)?,
        threads: file
            .threads
            .as_ref()
            .map_or(default.threads, Bounded::count),
        grace_period: file
            .grace_period
            .as_ref()
            .map_or(default.grace_period, Period::get),
        shutdown_timeout: file
            .shutdown_timeout
            .as_ref()
            .map_or(default.shutdown_timeout, Period::get),
        shadow: file.shadow,
        access_log: access_log(check, file)?,
        watch_config: file.watch_config,
        pid_file: match &file.pid_file {
            Some(path) => pid_file(check, path)?,
            None => default.pid_file,
        },
        upgrade_sock: match &file.upgrade_sock {
            Some(path) => upgrade_sock(check, path),
            None => default.upgrade_sock,
        },
        tls: tls_listener(check, file)?,
        limits: limits(check, file)?,
        h2c: file.h2c,
        front: FrontSettings {
            request_id_header: file
                .request_id_header
                .as_ref()
                .map_or(default.front.request_id_header, BackendHeader::get),
            via: file.via,
            preserve_header_case: file.preserve_header_case,
        },
    })
}

/// `server.listen`: needed to proxy to `[upstream]`, of no use without one.
fn listen(
    check: &Checker<'_>,
    file: &ServerFile,
    upstream: Option<&UpstreamFile>,
) -> Result<Option<SocketAddr>, ConfigError> {
    match (&file.listen, upstream) {
        (Some(listen), Some(_)) => Ok(Some(listen.get_ref().get())),
        (None, Some(upstream)) => {
            let message =
                "`[upstream]` needs `server.listen`, the address the proxy listens on".to_owned();
            Err(check.error(&upstream.backends, message))
        }
        (Some(listen), None) => {
            let message = "`server.listen`: there is no `[upstream]` to proxy to, so nothing \
                           listens here (only `[check]` and `[rls]` do)"
                .to_owned();
            log::warn!("{}", check.error(listen, message));
            Ok(None)
        }
        (None, None) => Ok(None),
    }
}

/// The access log: on with `access_log = true`, or when a format or a file is given.
fn access_log(
    check: &Checker<'_>,
    file: &ServerFile,
) -> Result<Option<AccessLogSettings>, ConfigError> {
    let format = match &file.access_log_format {
        None => LogFormat::Floodgate,
        Some(name) => match name.get_ref().as_str() {
            "floodgate" => LogFormat::Floodgate,
            "combined" => LogFormat::Combined,
            other => {
                let message = format!(
                    "`server.access_log_format` must be `floodgate` or `combined`, not `{other}`"
                );
                return Err(check.error(name, message));
            }
        },
    };
    let on = file.access_log || file.access_log_format.is_some() || file.access_log_file.is_some();
    Ok(on.then(|| AccessLogSettings {
        format,
        file: file.access_log_file.as_ref().map(|f| check.resolve(f)),
    }))
}

/// `server.pid_file`: a path, relative to the config file's directory when not absolute.
fn pid_file(check: &Checker<'_>, value: &Spanned<String>) -> Result<PathBuf, ConfigError> {
    let text = value.get_ref();
    if text.is_empty() || text.ends_with('/') {
        let message = format!("`server.pid_file` must name a file, not `{text}`");
        return Err(check.error(value, message));
    }
    let base = check.path.parent().unwrap_or(Path::new(""));
    Ok(base.join(text))
}

/// `server.upgrade_sock`: a path, relative to the config file's directory when not absolute.
fn upgrade_sock(check: &Checker<'_>, text: &str) -> String {
    let path = check.path.parent().unwrap_or(Path::new("")).join(text);
    path.display().to_string()
}

/// `header_timeout`, `keepalive_timeout`, `max_header_bytes` and the connection caps.
fn limits(check: &Checker<'_>, file: &ServerFile) -> Result<ConnectionLimits, ConfigError> {
    let default = ConnectionLimits::default();
    let header_timeout = match &file.header_timeout {
        Some(at) if at.get_ref().get().is_zero() => {
            return Err(check.error(at, "`server.header_timeout` must be above zero".into()));
        }
        Some(at) => at.get_ref().get(),
        None => default.header_timeout,
    };
    let max_connections = file
        .max_connections
        .as_ref()
        .map_or(default.max_connections, Bounded::count);
    Ok(ConnectionLimits {
        header_timeout,
        keepalive_timeout: file
            .keepalive_timeout
            .as_ref()
            .map_or(default.keepalive_timeout, Period::get),
        max_header_bytes: file
            .max_header_bytes
            .as_ref()
            .map_or(default.max_header_bytes, Bounded::count),
        max_connections,
        max_connections_set: file.max_connections.is_some(),
        max_connections_per_ip: file
            .max_connections_per_ip
            .as_ref()
            .map(|n| {
                check.integer(
                    n,
                    "server.max_connections_per_ip",
                    1..=max_connections as i64,
                )
            })
            .transpose()?
            .map(|n| n as usize),
    })
}

fn tls_listener(
    check: &Checker<'_>,
    file: &ServerFile,
) -> Result<Option<TlsListener>, ConfigError> {
    let files = match (&file.tls_cert_file, &file.tls_key_file) {
        (Some(cert), Some(key)) => Some(TlsFiles {
            cert_file: check.readable(cert, "server.tls_cert_file")?,
            key_file: check.readable(key, "server.tls_key_file")?,
        }),
        (None, None) => None,
        (cert, key) => {
            let at = cert.as_ref().or(key.as_ref());
            let message = "`server.tls_cert_file` and `tls_key_file` go together";
            return Err(match at {
                Some(at) => check.error(at, message.into()),
                None => ConfigError::at(check.path, check.text, None, message.into()),
            });
        }
    };
    match (&file.tls_listen, files) {
        (None, None) => Ok(None),
        (Some(listen), files) => Ok(Some(TlsListener {
            listen: listen.get(),
            files,
            h2: file.h2.unwrap_or(true),
            ja4: file.tls_ja4.unwrap_or(true),
        })),
        (None, Some(_)) => {
            let at = file.tls_cert_file.as_ref().or(file.tls_key_file.as_ref());
            let message = "`server.tls_cert_file` and `tls_key_file` need `server.tls_listen`";
            Err(match at {
                Some(at) => check.error(at, message.into()),
                None => ConfigError::at(check.path, check.text, None, message.into()),
            })
        }
    }
}

mod settings;

#[cfg(test)]
mod tests;
