//! File structs → runtime config: every check that serde cannot make, each error located.

use super::check::Checker;
use super::error::ConfigError;
use super::file::{FileConfig, ServerFile};
use super::identity::{self, IdentityParts};
use super::policies;
use super::runtime::{AdminSettings, Config, ResponseSettings, ServerSettings, TlsListener};
use super::store::store;
use super::upstream;
use std::path::Path;
use std::time::Duration;

const DEFAULT_ADMIN_LISTEN: &str = "127.0.0.1:9090";

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
    let IdentityParts { chain, client_ip } = identity::identity(&check, &file.identity)?;
    let upstream = upstream::upstream(&check, &file.upstream, &file.routes)?;
    let store = store(&check, &file.store, upstream.read_timeout)?;
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
        upstream,
        store,
        policies: policies::policies(&check, &file.policies, &chain, server.shadow)?,
        identity: chain,
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
            Duration::from_secs(5),
        )?,
        shutdown_timeout: check.duration(
            file.shutdown_timeout.as_ref(),
            "server.shutdown_timeout",
            Duration::from_secs(5),
        )?,
        shadow: file.shadow,
        access_log: file.access_log,
        watch_config: file.watch_config,
        pid_file: file
            .pid_file
            .clone()
            .unwrap_or_else(|| "/tmp/floodgate.pid".to_owned()),
        upgrade_sock: file
            .upgrade_sock
            .clone()
            .unwrap_or_else(|| "/tmp/floodgate_upgrade.sock".to_owned()),
        tls: tls_listener(check, file)?,
    })
}

fn tls_listener(
    check: &Checker<'_>,
    file: &ServerFile,
) -> Result<Option<TlsListener>, ConfigError> {
    match (&file.tls_listen, &file.tls_cert_file, &file.tls_key_file) {
        (None, None, None) => Ok(None),
        (Some(listen), Some(cert), Some(key)) => Ok(Some(TlsListener {
            listen: check.address(listen, "server.tls_listen")?,
            cert_file: check.readable(cert, "server.tls_cert_file")?,
            key_file: check.readable(key, "server.tls_key_file")?,
        })),
        _ => Err(check.error(
            &file.listen,
            "`server.tls_listen`, `tls_cert_file` and `tls_key_file` go together".into(),
        )),
    }
}
