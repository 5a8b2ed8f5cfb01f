//! `[server]`: the listeners, workers, shutdown, and the limits on downstream connections.

use super::check::Checker;
use super::error::ConfigError;
use super::instance_files::default_for;
use super::runtime::{ServerSettings, TlsFiles, TlsListener};
use super::upstream::UpstreamFile;

use crate::proxy::{AccessLogSettings, ConnectionLimits, FrontSettings, LogFormat};
use http::HeaderName;
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toml::Spanned;

/// `[server]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServerFile {
    pub(crate) listen: Option<Spanned<String>>,
    pub(crate) threads: Option<Spanned<i64>>,
    pub(crate) grace_period: Option<Spanned<String>>,
    pub(crate) shutdown_timeout: Option<Spanned<String>>,
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
    pub(crate) tls_listen: Option<Spanned<String>>,
    pub(crate) tls_cert_file: Option<Spanned<String>>,
    pub(crate) tls_key_file: Option<Spanned<String>>,
    pub(crate) tls_ja4: Option<bool>,
    pub(crate) header_timeout: Option<Spanned<String>>,
    pub(crate) keepalive_timeout: Option<Spanned<String>>,
    pub(crate) max_header_bytes: Option<Spanned<i64>>,
    pub(crate) max_connections: Option<Spanned<i64>>,
    pub(crate) max_connections_per_ip: Option<Spanned<i64>>,
    #[serde(default)]
    pub(crate) h2c: bool,
    pub(crate) h2: Option<bool>,
    #[serde(default)]
    pub(crate) via: bool,
    #[serde(default)]
    pub(crate) preserve_header_case: bool,
    pub(crate) request_id_header: Option<Spanned<String>>,
}

/// The validated `[server]` table; the proxy listens only when there is an `[upstream]`.
pub(super) fn server(
    check: &Checker<'_>,
    file: &ServerFile,
    upstream: Option<&UpstreamFile>,
) -> Result<ServerSettings, ConfigError> {
    Ok(ServerSettings {
        listen: listen(check, file, upstream)?,
        threads: match &file.threads {
            Some(threads) => check.integer(threads, "server.threads", 1..=1024)? as usize,
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        },
        grace_period: check.duration(
            file.grace_period.as_ref(),
            "server.grace_period",
            Duration::from_secs(5),
        )?,
        shutdown_timeout: check.duration(
            file.shutdown_timeout.as_ref(),
            "server.shutdown_timeout",
            Duration::from_secs(5),
        )?,
        shadow: file.shadow,
        access_log: access_log(check, file)?,
        watch_config: file.watch_config,
        pid_file: pid_file(check, file.pid_file.as_ref())?,
        upgrade_sock: upgrade_sock(check, file.upgrade_sock.as_deref()),
        tls: tls_listener(check, file)?,
        limits: limits(check, file)?,
        h2c: file.h2c,
        front: FrontSettings {
            request_id_header: match &file.request_id_header {
                Some(name) => request_id_header(check, name)?,
                None => FrontSettings::default().request_id_header,
            },
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
        (Some(listen), Some(_)) => check.address(listen, "server.listen").map(Some),
        (None, Some(upstream)) => {
            let message =
                "`[upstream]` needs `server.listen`, the address the proxy listens on".to_owned();
            Err(check.error(&upstream.backends, message))
        }
        (Some(listen), None) => {
            check.address(listen, "server.listen")?;
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

/// `server.pid_file`: a path, relative to the config file's directory when not absolute; by
/// default one of this config file's own (`instance_files`).
fn pid_file(check: &Checker<'_>, value: Option<&Spanned<String>>) -> Result<PathBuf, ConfigError> {
    let Some(value) = value else {
        return Ok(default_for(check.path, "pid"));
    };
    let text = value.get_ref();
    if text.is_empty() || text.ends_with('/') {
        let message = format!("`server.pid_file` must name a file, not `{text}`");
        return Err(check.error(value, message));
    }
    let base = check.path.parent().unwrap_or(Path::new(""));
    Ok(base.join(text))
}

/// `server.upgrade_sock`: a path, relative to the config file's directory when not absolute;
/// by default one of this config file's own (`instance_files`).
fn upgrade_sock(check: &Checker<'_>, value: Option<&str>) -> String {
    let path = match value {
        Some(text) => check.path.parent().unwrap_or(Path::new("")).join(text),
        None => default_for(check.path, "sock"),
    };
    path.display().to_string()
}

/// `server.request_id_header`: a header name of no other use.
fn request_id_header(
    check: &Checker<'_>,
    name: &Spanned<String>,
) -> Result<HeaderName, ConfigError> {
    let text = name.get_ref();
    let key = "server.request_id_header";
    let header = HeaderName::from_bytes(text.as_bytes())
        .map_err(|_| check.error(name, format!("`{key}` must be a header name, not `{text}`")))?;
    if super::check::RESERVED_HEADERS.contains(&header.as_str())
        || header.as_str().starts_with("ratelimit")
    {
        let message = format!("`{key}`: `{text}` has another use; name another header");
        return Err(check.error(name, message));
    }
    Ok(header)
}

/// `header_timeout`, `keepalive_timeout`, `max_header_bytes` and the connection caps.
fn limits(check: &Checker<'_>, file: &ServerFile) -> Result<ConnectionLimits, ConfigError> {
    let default = ConnectionLimits::default();
    let header_timeout = check.duration(
        file.header_timeout.as_ref(),
        "server.header_timeout",
        default.header_timeout,
    )?;
    if let (Some(at), true) = (&file.header_timeout, header_timeout.is_zero()) {
        return Err(check.error(at, "`server.header_timeout` must be above zero".into()));
    }
    let max_connections = match &file.max_connections {
        Some(n) => check.integer(n, "server.max_connections", 1..=10_000_000)?,
        None => default.max_connections as i64,
    };
    Ok(ConnectionLimits {
        header_timeout,
        keepalive_timeout: check.duration(
            file.keepalive_timeout.as_ref(),
            "server.keepalive_timeout",
            default.keepalive_timeout,
        )?,
        max_header_bytes: match &file.max_header_bytes {
            // Pingora itself refuses heads past 1 MiB.
            Some(n) => check.integer(n, "server.max_header_bytes", 1024..=1_048_575)? as usize,
            None => default.max_header_bytes,
        },
        max_connections: max_connections as usize,
        max_connections_set: file.max_connections.is_some(),
        max_connections_per_ip: file
            .max_connections_per_ip
            .as_ref()
            .map(|n| check.integer(n, "server.max_connections_per_ip", 1..=max_connections))
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
            listen: check.address(listen, "server.tls_listen")?,
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

#[cfg(test)]
mod tests;
