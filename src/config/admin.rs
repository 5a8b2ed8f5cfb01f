//! `[admin]`: the admin listener's settings (its address, the offenders list, the tokens and
//! state file, the bounds on bans, overrides and connections), as written and as run, with
//! their defaults and how `--test` describes them. A key of `[admin]` is added here alone
//! (and in the reference, docs/src/configuration.md).

use super::check::Checker;
use super::error::ConfigError;
use super::value::{config_keys, Address, Bounded, Period};
use crate::control::Bounds;
use serde::Deserialize;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;
use toml::Spanned;

config_keys! {
    Listen = "admin.listen",
    OffendersWindow = "admin.offenders_window",
    OffendersTop = "admin.offenders_top",
    MaxBans = "admin.max_bans",
    MaxOverrides = "admin.max_overrides",
    MaxConnections = "admin.max_connections",
}

/// The most bans, overrides or admin connections a config may ask for.
const MAX_COUNT: i64 = 10_000_000;

/// `[admin]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AdminFile {
    listen: Option<Address<Listen>>,
    offenders_window: Option<Period<OffendersWindow>>,
    offenders_top: Option<Bounded<OffendersTop, 1, 1000>>,
    token_file: Option<Spanned<String>>,
    state_file: Option<Spanned<String>>,
    protect_metrics: Option<Spanned<bool>>,
    max_bans: Option<Bounded<MaxBans, 1, MAX_COUNT>>,
    max_overrides: Option<Bounded<MaxOverrides, 1, MAX_COUNT>>,
    max_connections: Option<Bounded<MaxConnections, 1, MAX_COUNT>>,
}

/// `[admin]`.
#[derive(Debug, Clone, PartialEq)]
pub struct AdminSettings {
    /// Admin listener address (metrics and health).
    pub listen: SocketAddr,
    /// The window the top-offenders view covers (between one and two of these).
    pub offenders_window: Duration,
    /// How many identities the top-offenders view lists.
    pub offenders_top: usize,
    /// The control API's tokens (`name:token` lines); without it the control API answers 403.
    pub token_file: Option<PathBuf>,
    /// Where the memory store keeps bans and overrides across restarts.
    pub state_file: Option<PathBuf>,
    /// Whether `/metrics` and `/offenders` need a control API token.
    pub protect_metrics: bool,
    /// How many bans and overrides may be held.
    pub bounds: Bounds,
    /// The most connections open at once on the admin listener.
    pub max_connections: usize,
}

impl Default for AdminSettings {
    /// The settings of an empty `[admin]`.
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 9090)),
            offenders_window: Duration::from_secs(60),
            offenders_top: 20,
            token_file: None,
            state_file: None,
            protect_metrics: false,
            bounds: Bounds::default(),
            // Its peers are scrapers and operators, and each held connection costs memory.
            max_connections: 1000,
        }
    }
}

impl AdminFile {
    /// The settings, each key not written taking its default.
    pub(crate) fn settings(&self, check: &Checker<'_>) -> Result<AdminSettings, ConfigError> {
        let default = AdminSettings::default();
        Ok(AdminSettings {
            listen: self.listen.as_ref().map_or(default.listen, Address::get),
            offenders_window: self
                .offenders_window
                .as_ref()
                .map_or(default.offenders_window, Period::get),
            offenders_top: self
                .offenders_top
                .as_ref()
                .map_or(default.offenders_top, Bounded::count),
            token_file: match &self.token_file {
                Some(path) => Some(check.readable(path, "admin.token_file")?.into()),
                None => None,
            },
            state_file: self.state_file.as_ref().map(|p| check.resolve(p.get_ref())),
            protect_metrics: self.protect_metrics(check)?,
            bounds: Bounds {
                max_bans: self
                    .max_bans
                    .as_ref()
                    .map_or(default.bounds.max_bans, Bounded::count),
                max_overrides: self
                    .max_overrides
                    .as_ref()
                    .map_or(default.bounds.max_overrides, Bounded::count),
            },
            max_connections: self
                .max_connections
                .as_ref()
                .map_or(default.max_connections, Bounded::count),
        })
    }

    /// `admin.protect_metrics`, which needs the tokens of `admin.token_file`.
    fn protect_metrics(&self, check: &Checker<'_>) -> Result<bool, ConfigError> {
        match (&self.protect_metrics, &self.token_file) {
            (Some(protect), None) if *protect.get_ref() => Err(check.error(
                protect,
                "`admin.protect_metrics` needs `admin.token_file`: its tokens open /metrics and /offenders"
                    .to_owned(),
            )),
            (Some(protect), _) => Ok(*protect.get_ref()),
            (None, _) => Ok(false),
        }
    }
}

impl fmt::Display for AdminSettings {
    /// `--test`'s lines for the admin listener and the control API.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "admin listener  {} (top {} offenders over {:?}){}",
            self.listen,
            self.offenders_top,
            self.offenders_window,
            match self.protect_metrics {
                true => "; /metrics and /offenders need a token",
                false => "",
            }
        )?;
        match &self.token_file {
            Some(tokens) => writeln!(
                f,
                "control API     tokens from {}; at most {} bans, {} overrides{}",
                tokens.display(),
                self.bounds.max_bans,
                self.bounds.max_overrides,
                self.state_file
                    .as_ref()
                    .map_or(String::new(), |p| format!("; kept in {}", p.display()))
            ),
            None => writeln!(f, "control API     off (set admin.token_file to enable it)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use crate::config::tests::BASE;
    use std::path::Path;

    /// The error of [`BASE`] with `[admin]` of `keys` (on line 10 on).
    fn error_of(keys: &str) -> String {
        let text = format!("{BASE}\n[admin]\n{keys}\n");
        parse(&text, Path::new("f.toml")).unwrap_err().to_string()
    }

    #[test]
    fn each_mistake_is_located_at_its_value_and_names_its_key() {
        let cases = [
            (
                "offenders_top = 0",
                "f.toml:10:17: `admin.offenders_top` must be between 1 and 1000, not 0",
            ),
            (
                "offenders_top = \"many\"",
                "f.toml:10:17: invalid type: string \"many\", expected i64",
            ),
            (
                "max_bans = 10000001",
                "f.toml:10:12: `admin.max_bans` must be between 1 and 10000000, not 10000001",
            ),
            (
                "offenders_window = \"soon\"",
                "f.toml:10:20: `admin.offenders_window` must be a duration like 500ms or 30s: \
                 expected number at 0",
            ),
            (
                "listen = \"localhost\"",
                "f.toml:10:10: `admin.listen` must be an address like 127.0.0.1:8080, not \
                 `localhost`",
            ),
            (
                "protect_metrics = true",
                "f.toml:10:19: `admin.protect_metrics` needs `admin.token_file`: its tokens \
                 open /metrics and /offenders",
            ),
        ];
        for (keys, message) in cases {
            assert_eq!(error_of(keys), message, "{keys}");
        }
    }

    #[test]
    fn an_empty_admin_section_gets_the_defaults() {
        let text = format!("{BASE}\n[admin]\n");
        let config = parse(&text, Path::new("f.toml")).unwrap();
        assert_eq!(config.admin, super::AdminSettings::default());
    }
}
