//! `[upstream.health]` and a pool's `health` table → its health settings. A pool's keys
//! override `upstream.health`'s, key by key; errors name the table the value came from.

use crate::config::check::Checker;
use crate::config::error::ConfigError;
use crate::proxy::{ActiveCheck, HealthSettings};
use serde::Deserialize;
use std::time::Duration;
use toml::Spanned;

/// `[upstream.health]` or a pool's `health` table; a pool's keys override the upstream's.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HealthFile {
    pub(crate) active: Option<bool>,
    pub(crate) path: Option<Spanned<String>>,
    pub(crate) interval: Option<Spanned<String>>,
    pub(crate) timeout: Option<Spanned<String>>,
    pub(crate) unhealthy_after: Option<Spanned<i64>>,
    pub(crate) healthy_after: Option<Spanned<i64>>,
    pub(crate) eject_after: Option<Spanned<i64>>,
    pub(crate) eject_for: Option<Spanned<String>>,
}

/// The largest `unhealthy_after`, `healthy_after` and `eject_after`.
const MAX_COUNT: i64 = 1000;

/// The pool's own health table (named `key`) over `upstream.health`.
struct Layers<'a> {
    own: Option<&'a HealthFile>,
    key: &'a str,
    inherited: Option<&'a HealthFile>,
}

impl<'a> Layers<'a> {
    /// The value of `field` (`pick` reads it) and the full key that names it.
    fn get<T>(
        &self,
        field: &str,
        pick: impl Fn(&'a HealthFile) -> Option<&'a Spanned<T>>,
    ) -> (Option<&'a Spanned<T>>, String) {
        if let Some(value) = self.own.and_then(&pick) {
            return (Some(value), format!("{}.{field}", self.key));
        }
        if let Some(value) = self.inherited.and_then(&pick) {
            return (Some(value), format!("upstream.health.{field}"));
        }
        (None, format!("{}.{field}", self.key))
    }

    /// Active checks run when either table exists, unless `active = false`.
    fn active(&self) -> bool {
        let active = self
            .own
            .and_then(|f| f.active)
            .or(self.inherited.and_then(|f| f.active));
        self.own.or(self.inherited).is_some() && active != Some(false)
    }
}

/// A pool's health: each key from its own table (`own`, named `key`), else from
/// `upstream.health` (`inherited`), else the default.
pub(super) fn health(
    check: &Checker<'_>,
    own: Option<&HealthFile>,
    inherited: Option<&HealthFile>,
    key: &str,
) -> Result<HealthSettings, ConfigError> {
    let layers = Layers {
        own,
        key,
        inherited,
    };
    let positive = |(value, name): (Option<&Spanned<String>>, String), default| {
        let duration = check.duration(value, &name, default)?;
        match (duration.is_zero(), value) {
            (true, Some(at)) => Err(check.error(at, format!("`{name}` must be above zero"))),
            _ => Ok(duration),
        }
    };
    let count = |(value, name): (Option<&Spanned<i64>>, String), least, default| match value {
        Some(n) => check.integer(n, &name, least..=MAX_COUNT),
        None => Ok(default),
    };
    let active = match layers.active() {
        false => None,
        true => Some(ActiveCheck {
            path: probe_path(check, layers.get("path", |f| f.path.as_ref()))?,
            interval: positive(
                layers.get("interval", |f| f.interval.as_ref()),
                Duration::from_secs(5),
            )?,
            timeout: positive(
                layers.get("timeout", |f| f.timeout.as_ref()),
                Duration::from_secs(1),
            )?,
            unhealthy_after: count(
                layers.get("unhealthy_after", |f| f.unhealthy_after.as_ref()),
                1,
                3,
            )? as usize,
            healthy_after: count(
                layers.get("healthy_after", |f| f.healthy_after.as_ref()),
                1,
                2,
            )? as usize,
        }),
    };
    Ok(HealthSettings {
        active,
        eject_after: count(layers.get("eject_after", |f| f.eject_after.as_ref()), 0, 5)? as u32,
        eject_for: positive(
            layers.get("eject_for", |f| f.eject_for.as_ref()),
            Duration::from_secs(10),
        )?,
    })
}

/// The probed path: `/` unless configured; an absolute path, with a query if wanted.
fn probe_path(
    check: &Checker<'_>,
    (value, name): (Option<&Spanned<String>>, String),
) -> Result<String, ConfigError> {
    let Some(path) = value else {
        return Ok("/".to_owned());
    };
    let text = path.get_ref();
    if !text.starts_with('/') || text.parse::<http::uri::PathAndQuery>().is_err() {
        let message = format!("`{name}` must be a path like /healthz, not `{text}`");
        return Err(check.error(path, message));
    }
    Ok(text.clone())
}
