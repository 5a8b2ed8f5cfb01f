//! `[admin]` → the admin listener's settings: its address, the offenders list, the tokens and
//! state file, and the bounds on bans, overrides and connections.

use super::check::Checker;
use super::error::ConfigError;
use super::runtime::AdminSettings;
use crate::control::Bounds;
use serde::Deserialize;
use std::net::SocketAddr;
use std::time::Duration;
use toml::Spanned;

/// `[admin]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AdminFile {
    pub(crate) listen: Option<Spanned<String>>,
    pub(crate) offenders_window: Option<Spanned<String>>,
    pub(crate) offenders_top: Option<Spanned<i64>>,
    pub(crate) token_file: Option<Spanned<String>>,
    pub(crate) state_file: Option<Spanned<String>>,
    pub(crate) protect_metrics: Option<Spanned<bool>>,
    pub(crate) max_bans: Option<Spanned<i64>>,
    pub(crate) max_overrides: Option<Spanned<i64>>,
    pub(crate) max_connections: Option<Spanned<i64>>,
}

const DEFAULT_ADMIN_LISTEN: &str = "127.0.0.1:9090";

/// Connections open at once on the admin listener when `admin.max_connections` is not given:
/// its peers are scrapers and operators, and each held connection costs memory.
const ADMIN_MAX_CONNECTIONS: usize = 1000;

/// `admin.max_bans` or `admin.max_overrides`: 1 to 10 million, 100 000 by default.
fn bound(
    check: &Checker<'_>,
    value: Option<&Spanned<i64>>,
    key: &str,
) -> Result<usize, ConfigError> {
    match value {
        Some(n) => Ok(check.integer(n, key, 1..=10_000_000)? as usize),
        None => Ok(Bounds::default().max_bans),
    }
}

/// `admin.protect_metrics`, which needs the tokens of `admin.token_file`.
fn protect_metrics(check: &Checker<'_>, admin: &AdminFile) -> Result<bool, ConfigError> {
    match (&admin.protect_metrics, &admin.token_file) {
        (Some(protect), None) if *protect.get_ref() => Err(check.error(
            protect,
            "`admin.protect_metrics` needs `admin.token_file`: its tokens open /metrics and /offenders"
                .to_owned(),
        )),
        (Some(protect), _) => Ok(*protect.get_ref()),
        (None, _) => Ok(false),
    }
}

/// `admin.listen`, 127.0.0.1:9090 by default (checked before the rest of the file).
pub(crate) fn listen(check: &Checker<'_>, admin: &AdminFile) -> Result<SocketAddr, ConfigError> {
    match &admin.listen {
        Some(listen) => check.address(listen, "admin.listen"),
        None => Ok(DEFAULT_ADMIN_LISTEN
            .parse()
            .expect("the default admin address is valid")),
    }
}

/// The rest of `[admin]`, with the listener `listen` already checked.
pub(crate) fn admin(
    check: &Checker<'_>,
    admin: &AdminFile,
    listen: SocketAddr,
) -> Result<AdminSettings, ConfigError> {
    Ok(AdminSettings {
        listen,
        offenders_window: check.duration(
            admin.offenders_window.as_ref(),
            "admin.offenders_window",
            Duration::from_secs(60),
        )?,
        offenders_top: match &admin.offenders_top {
            Some(top) => check.integer(top, "admin.offenders_top", 1..=1000)? as usize,
            None => 20,
        },
        token_file: match &admin.token_file {
            Some(path) => Some(check.readable(path, "admin.token_file")?.into()),
            None => None,
        },
        state_file: admin
            .state_file
            .as_ref()
            .map(|p| check.resolve(p.get_ref())),
        protect_metrics: protect_metrics(check, admin)?,
        bounds: Bounds {
            max_bans: bound(check, admin.max_bans.as_ref(), "admin.max_bans")?,
            max_overrides: bound(check, admin.max_overrides.as_ref(), "admin.max_overrides")?,
        },
        max_connections: match &admin.max_connections {
            Some(n) => check.integer(n, "admin.max_connections", 1..=10_000_000)? as usize,
            None => ADMIN_MAX_CONNECTIONS,
        },
    })
}
