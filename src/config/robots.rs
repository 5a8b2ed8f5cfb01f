//! `[robots]` → the robots.txt settings: where the file comes from (the backend's, or one
//! written from `groups`), how often the backend's is read, and the trap.

mod groups;
mod line;
mod trap;

use super::check::Checker;
use super::error::ConfigError;
use super::value::{config_keys, PositivePeriod};
use crate::bots::Catalogue;
use crate::policy::Policy;
use crate::proxy::PoolRoute;
use crate::robots::{
    RobotsSettings, Source, DEFAULT_REFRESH, DEFAULT_TRAP_BAN, DEFAULT_TRAP_WINDOW, MIN_REFRESH,
};
use groups::GroupFile;
pub(crate) use line::RobotsLine;
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

config_keys! {
    Refresh = "robots.refresh",
    TrapBan = "robots.trap_ban",
    TrapWindow = "robots.trap_window",
}

/// `source`.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SourceWord {
    Backend,
    Managed,
}

/// `[robots]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RobotsFile {
    source: Option<Spanned<SourceWord>>,
    refresh: Option<Spanned<PositivePeriod<Refresh>>>,
    groups: Option<Spanned<BTreeMap<String, Spanned<GroupFile>>>>,
    content_signal: Option<Spanned<String>>,
    trap: Option<Spanned<String>>,
    trap_ban: Option<PositivePeriod<TrapBan>>,
    trap_window: Option<PositivePeriod<TrapWindow>>,
}

/// What the rest of the config says that `[robots]` is checked against.
pub(crate) struct Context<'a> {
    /// Whether `[upstream]` names backends to read `/robots.txt` from.
    pub(crate) backend: bool,
    /// `challenge.path`.
    pub(crate) challenge_path: &'a str,
    /// The `[[route]]`s.
    pub(crate) routes: &'a [PoolRoute],
    /// The policies.
    pub(crate) policies: &'a [Policy],
    /// The crawler catalogue the categories expand to.
    pub(crate) catalogue: &'a Catalogue,
}

/// The checked `[robots]` table, if there is one.
pub(crate) fn robots(
    check: &Checker<'_>,
    file: Option<&Spanned<RobotsFile>>,
    context: &Context<'_>,
) -> Result<Option<RobotsSettings>, ConfigError> {
    let Some(table) = file else {
        return Ok(None);
    };
    let file = table.get_ref();
    let source = match file.source.as_ref().map(|s| *s.get_ref()) {
        Some(SourceWord::Managed) => Source::Managed,
        Some(SourceWord::Backend) | None => Source::Backend,
    };
    if source == Source::Backend {
        backend_only(check, table, context)?;
    }
    let groups = match &file.groups {
        Some(groups) => groups::groups(check, groups, context.catalogue)?,
        None => Vec::new(),
    };
    let trap = match &file.trap {
        Some(trap) => Some(trap::trap(check, trap, file.groups.as_ref(), context)?),
        None => None,
    };
    Ok(Some(RobotsSettings {
        source,
        refresh: refresh(check, file.refresh.as_ref())?,
        groups,
        content_signal: file
            .content_signal
            .as_ref()
            .map(|s| content_signal(check, s))
            .transpose()?,
        trap,
        trap_ban: file
            .trap_ban
            .as_ref()
            .map_or(DEFAULT_TRAP_BAN, PositivePeriod::get),
        trap_window: file
            .trap_window
            .as_ref()
            .map_or(DEFAULT_TRAP_WINDOW, PositivePeriod::get),
    }))
}

/// With `source = "backend"` (or none): a backend to read the file from, and none of the
/// keys that only write a managed file.
fn backend_only(
    check: &Checker<'_>,
    table: &Spanned<RobotsFile>,
    context: &Context<'_>,
) -> Result<(), ConfigError> {
    let file = table.get_ref();
    let source = file.source.as_ref().map(Spanned::span);
    if !context.backend {
        let message = "`robots.source = \"backend\"` (the default) reads the backend's \
                       /robots.txt, and there is no `[upstream]`: add one, or write the file \
                       with `source = \"managed\"`"
            .to_owned();
        let at = source.unwrap_or(table.span());
        return Err(ConfigError::at(check.path, check.text, Some(at), message));
    }
    if let Some(groups) = &file.groups {
        let message = "`robots.groups` is for `source = \"managed\"`: with `\"backend\"` the \
                       backend's robots.txt says who may fetch what"
            .to_owned();
        return Err(check.error(groups, message));
    }
    if let Some(signal) = &file.content_signal {
        let message = "`robots.content_signal` is for `source = \"managed\"`: the backend's \
                       robots.txt is served as it wrote it (write the line there)"
            .to_owned();
        return Err(check.error(signal, message));
    }
    Ok(())
}

fn refresh(
    check: &Checker<'_>,
    refresh: Option<&Spanned<PositivePeriod<Refresh>>>,
) -> Result<std::time::Duration, ConfigError> {
    let Some(value) = refresh else {
        return Ok(DEFAULT_REFRESH);
    };
    match value.get_ref().get() {
        period if period >= MIN_REFRESH => Ok(period),
        _ => Err(check.error(value, "`robots.refresh` must be at least 1s".to_owned())),
    }
}

/// `content_signal`: comma-separated `name=yes` or `name=no` (contentsignals.org:
/// `search=yes, ai-train=no`), names of lowercase letters and `-`.
fn content_signal(check: &Checker<'_>, value: &Spanned<String>) -> Result<String, ConfigError> {
    let text = value.get_ref().trim();
    let signal = |part: &str| {
        let (name, answer) = part.trim().split_once('=')?;
        let name_ok = !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
        (name_ok && matches!(answer, "yes" | "no")).then_some(())
    };
    match !text.is_empty() && text.split(',').all(|part| signal(part).is_some()) {
        true => Ok(text.to_owned()),
        false => Err(check.error(
            value,
            format!(
                "`robots.content_signal` must be signals like \"search=yes, ai-train=no\" \
                 (`name=yes` or `name=no`, comma-separated), not `{}`",
                value.get_ref()
            ),
        )),
    }
}

#[cfg(test)]
mod tests;
