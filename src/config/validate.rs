//! File structs → runtime config: every check that serde cannot make, each error located.

use super::check::Checker;
use super::error::ConfigError;
use super::file::{AdminFile, FileConfig};
use super::identity::{self, IdentityParts};
use super::policies;
use super::runtime::{AdminSettings, Config, ResponseSettings};
use super::server::server;
use super::store::store;
use super::upstream;
use super::{acme, bots, challenge, crowdsec, decisions, geo, rls};
use crate::control::Bounds;
use std::path::Path;
use std::time::Duration;
use toml::Spanned;

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

/// Refuses a config that gives Floodgate nothing to do: no `[upstream]` to proxy to, no
/// `[check]` or `[rls]` to answer.
fn purpose(check: &Checker<'_>, file: &FileConfig) -> Result<(), ConfigError> {
    if file.upstream.is_some() || file.check.is_some() || file.rls.is_some() {
        return Ok(());
    }
    let message = "nothing to serve: add `[upstream]` (the backends to proxy to), `[check]` (the \
                   decision endpoint) or `[rls]` (Envoy's rate limit service)";
    Err(ConfigError::at(
        check.path,
        check.text,
        None,
        message.to_owned(),
    ))
}

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
    purpose(&check, &file)?;
    let server = server(&check, &file.server, file.upstream.as_ref())?;
    let rls = match &file.rls {
        Some(table) => Some(rls::rls(&check, table, server.tls.as_ref())?),
        None => None,
    };
    let IdentityParts {
        chain,
        client_ip,
        hash_key,
    } = identity::identity(&check, &file.identity)?;
    let upstream = upstream::upstream(&check, file.upstream.as_ref(), &file.routes)?;
    let store = store(&check, &file.store, upstream.read_timeout)?;
    let acme = acme::settings(&check, file.tls.as_ref(), &server, &store)?;
    Ok(Config {
        acme,
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
            token_file: match &file.admin.token_file {
                Some(path) => Some(check.readable(path, "admin.token_file")?.into()),
                None => None,
            },
            state_file: file
                .admin
                .state_file
                .as_ref()
                .map(|p| check.resolve(p.get_ref())),
            protect_metrics: protect_metrics(&check, &file.admin)?,
            bounds: Bounds {
                max_bans: bound(&check, file.admin.max_bans.as_ref(), "admin.max_bans")?,
                max_overrides: bound(
                    &check,
                    file.admin.max_overrides.as_ref(),
                    "admin.max_overrides",
                )?,
            },
            max_connections: match &file.admin.max_connections {
                Some(n) => check.integer(n, "admin.max_connections", 1..=10_000_000)? as usize,
                None => ADMIN_MAX_CONNECTIONS,
            },
        },
        upstream,
        store,
        policies: policies::policies(&check, &file.policies, &chain, server.shadow)?,
        identity: chain,
        hash_key,
        client_ip,
        jwt,
        access: identity::access(&check, &file.access)?,
        server,
        check: match &file.check {
            Some(table) => Some(decisions::check(&check, table)?),
            None => None,
        },
        rls,
        crowdsec: match &file.crowdsec {
            Some(table) => Some(crowdsec::crowdsec(&check, table)?),
            None => None,
        },
        bots: bots::bots(&check, &file.bots)?,
        challenge: challenge::settings(&check, file.challenge.as_ref())?,
        geo: geo::geo(&check, file.geo.as_ref())?,
        response: ResponseSettings {
            throttle_status: match &file.response.status {
                Some(status) => check.integer(status, "response.status", 400..=599)? as u16,
                None => 429,
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use std::path::Path;

    fn load(text: &str) -> Result<crate::config::Config, String> {
        parse(text, Path::new("t.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn a_config_that_only_decides_needs_no_upstream_nor_server_table() {
        let config = load("[check]\nlisten = \"127.0.0.1:9100\"\n").unwrap();
        assert_eq!(
            config.server.listen, None,
            "nothing to proxy, nothing listens"
        );
        assert!(config.upstream.pools.is_empty());
        let config =
            load("[server]\nlisten = \"127.0.0.1:8080\"\n[check]\nlisten = \"127.0.0.1:9100\"\n")
                .unwrap();
        assert_eq!(config.server.listen, None, "warned about, not opened");
        let rules = tempfile::tempdir().unwrap();
        let rls = format!("[rls]\nconfig_dir = \"{}\"\n", rules.path().display());
        assert_eq!(load(&rls).unwrap().server.listen, None);
    }

    #[test]
    fn a_config_with_nothing_to_serve_or_a_proxy_without_a_listener_is_refused() {
        for (text, expected) in [
            (
                "[server]\nlisten = \"127.0.0.1:8080\"\n",
                "t.toml:1:1: nothing to serve: add `[upstream]`",
            ),
            ("", "t.toml:1:1: nothing to serve"),
            (
                "[upstream]\nbackends = [\"127.0.0.1:8000\"]\n",
                "t.toml:2:12: `[upstream]` needs `server.listen`",
            ),
            (
                "[check]\nlisten = \"127.0.0.1:9100\"\n[[route]]\npool = \"api\"\n",
                "t.toml:4:8: `route.pool`: a `[[route]]` picks a pool of `[upstream]`",
            ),
        ] {
            let e = load(text).unwrap_err();
            assert!(e.starts_with(expected), "{e}");
        }
    }
}
