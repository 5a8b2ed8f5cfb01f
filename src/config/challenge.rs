//! A policy's challenge (`action = "challenge"` or `on_limit = "challenge"`, with
//! `challenge`, `difficulty` and `bind`) and the `[challenge]` table (its
//! `[challenge.privacy_pass]` read in `privacy_pass.rs`).

use super::check::Checker;
use super::error::ConfigError;
use super::policy_table::PolicyFile;
use super::privacy_pass::PrivacyPassFile;
use super::value::{config_keys, Key, Period};
use crate::challenge::{ChallengeSettings, PageRules};
use crate::identity::{Bind, Challenge, ChallengeKind, DEFAULT_DIFFICULTY, MAX_DIFFICULTY};
use serde::Deserialize;
use std::time::Duration;
use toml::Spanned;

pub(crate) use line::ChallengeLine;

config_keys! {
    PassTtl = "challenge.pass_ttl",
    NonceTtl = "challenge.nonce_ttl",
    RefreshWait = "challenge.refresh_wait",
}

/// `[challenge]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ChallengeFile {
    pub(crate) status: Option<Spanned<i64>>,
    pub(crate) pass_ttl: Option<Spanned<Period<PassTtl>>>,
    pub(crate) nonce_ttl: Option<Spanned<Period<NonceTtl>>>,
    pub(crate) refresh_wait: Option<Spanned<Period<RefreshWait>>>,
    pub(crate) path: Option<Spanned<String>>,
    pub(crate) cookie: Option<Spanned<String>>,
    pub(crate) never_paths: Option<Spanned<Vec<String>>>,
    pub(crate) privacy_pass: Option<Spanned<PrivacyPassFile>>,
}

/// The challenge of a policy whose `action` is `challenge`.
pub(crate) fn of_action(check: &Checker<'_>, file: &PolicyFile) -> Result<Challenge, ConfigError> {
    if let Some(on_limit) = &file.on_limit {
        let message = "`policy.on_limit` is for `limit` policies: a `challenge` policy challenges \
                       every page load without a pass"
            .to_owned();
        return Err(check.error(on_limit, message));
    }
    challenge(check, file)
}

/// A `limit` policy's `on_limit`: the challenge a dry bucket answers page loads with, or
/// `None` for the ordinary refusal (`"refuse"`, the default). The challenge keys without
/// `on_limit = "challenge"` are refused where they stand.
pub(crate) fn on_limit(
    check: &Checker<'_>,
    file: &PolicyFile,
) -> Result<Option<Challenge>, ConfigError> {
    let challenging = match &file.on_limit {
        None => false,
        Some(word) => match word.get_ref().as_str() {
            "refuse" => false,
            "challenge" => true,
            other => {
                let message =
                    format!("`policy.on_limit` must be `refuse` or `challenge`, not `{other}`");
                return Err(check.error(word, message));
            }
        },
    };
    match challenging {
        true => {
            warn_without_pass(check, file);
            Ok(Some(challenge(check, file)?))
        }
        false => none_asked(check, file).map(|()| None),
    }
}

/// Refuses the challenge keys of a policy that challenges no one (by neither `action`,
/// `on_limit` nor `on_overload`).
pub(crate) fn none_asked(check: &Checker<'_>, file: &PolicyFile) -> Result<(), ConfigError> {
    match challenges_on_overload(file) {
        true => Ok(()),
        false => no_challenge_keys(check, file),
    }
}

/// Warns, located, when an `on_limit = "challenge"` policy does not name its callers by their
/// pass: a browser that solved the challenge is still the caller whose bucket is dry, so it
/// meets a 429 until the bucket refills.
fn warn_without_pass(check: &Checker<'_>, file: &PolicyFile) {
    let by_pass = file.sources.as_ref().is_some_and(|list| {
        list.get_ref()
            .iter()
            .any(|s| s.get_ref().split('+').any(|p| p == "pass"))
    });
    if let (false, Some(on_limit)) = (by_pass, &file.on_limit) {
        let message = "`policy.on_limit = \"challenge\"` without `pass` in `policy.sources`: a \
                       browser that solves the challenge keeps its dry bucket and gets 429s; \
                       `sources = [\"pass\", \"ip\"]` gives each pass a bucket of its own"
            .to_owned();
        log::warn!("{}", check.error(on_limit, message));
    }
}

/// The challenge of a policy with `on_overload = "challenge"` (its challenge keys, or the
/// default challenge).
pub(crate) fn of_overload(
    check: &Checker<'_>,
    file: &PolicyFile,
) -> Result<Challenge, ConfigError> {
    challenge(check, file)
}

/// Whether `file` says `on_overload = "challenge"` (its challenge keys are then in use).
fn challenges_on_overload(file: &PolicyFile) -> bool {
    file.on_overload
        .as_ref()
        .is_some_and(|w| w.get_ref() == "challenge")
}

/// Refuses the challenge keys of a policy that challenges no one.
fn no_challenge_keys(check: &Checker<'_>, file: &PolicyFile) -> Result<(), ConfigError> {
    let given = [
        ("challenge", file.challenge.as_ref().map(Spanned::span)),
        ("difficulty", file.difficulty.as_ref().map(Spanned::span)),
        ("bind", file.bind.as_ref().map(Spanned::span)),
    ];
    match given.into_iter().find(|(_, at)| at.is_some()) {
        None => Ok(()),
        Some((key, at)) => {
            let message = format!(
                "`policy.{key}` is for policies that challenge: `action = \"challenge\"`, \
                 `on_limit = \"challenge\"` or `on_overload = \"challenge\"`"
            );
            Err(ConfigError::at(check.path, check.text, at, message))
        }
    }
}

fn challenge(check: &Checker<'_>, file: &PolicyFile) -> Result<Challenge, ConfigError> {
    let kind = match &file.challenge {
        None => "pow",
        Some(word) => match word.get_ref().as_str() {
            kind @ ("pow" | "refresh") => kind,
            other => {
                let message =
                    format!("`policy.challenge` must be `refresh` or `pow`, not `{other}`");
                return Err(check.error(word, message));
            }
        },
    };
    let kind = match (kind, &file.difficulty) {
        ("refresh", Some(bits)) => {
            let message = "`policy.difficulty` is for `challenge = \"pow\"`: a `refresh` \
                           challenge does no work"
                .to_owned();
            return Err(check.error(bits, message));
        }
        ("refresh", None) => ChallengeKind::Refresh,
        (_, bits) => ChallengeKind::Pow {
            difficulty: match bits {
                Some(bits) => u8::try_from(bits.get_ref().count()).unwrap_or(MAX_DIFFICULTY),
                None => DEFAULT_DIFFICULTY,
            },
        },
    };
    let bind = match &file.bind {
        None => Bind::default(),
        Some(word) => Bind::ALL
            .into_iter()
            .find(|b| b.word() == word.get_ref())
            .ok_or_else(|| {
                let message = format!(
                    "`policy.bind` must be `none` or `network`, not `{}`",
                    word.get_ref()
                );
                check.error(word, message)
            })?,
    };
    Ok(Challenge { kind, bind })
}

/// The `[challenge]` table's settings (the defaults without one).
pub(crate) fn settings(
    check: &Checker<'_>,
    file: Option<&ChallengeFile>,
) -> Result<ChallengeSettings, ConfigError> {
    let defaults = ChallengeSettings::default();
    let Some(file) = file else {
        return Ok(defaults);
    };
    let day = Duration::from_secs(24 * 3600);
    let settings = ChallengeSettings {
        // RFC 9577 carries the token challenge on a 401, where clients look for it.
        status: match (&file.status, &file.privacy_pass) {
            (Some(status), _) => page_status(check, status)?,
            (None, Some(_)) => 401,
            (None, None) => defaults.status,
        },
        pass_ttl: bounded(check, file.pass_ttl.as_ref(), defaults.pass_ttl, 365 * day)?,
        nonce_ttl: bounded(check, file.nonce_ttl.as_ref(), defaults.nonce_ttl, day)?,
        refresh_wait: bounded(
            check,
            file.refresh_wait.as_ref(),
            defaults.refresh_wait,
            Duration::from_secs(60),
        )?,
        path: match &file.path {
            Some(path) => solution_path(check, path)?,
            None => defaults.path,
        },
        cookie: match &file.cookie {
            Some(name) => cookie_name(check, name)?,
            None => defaults.cookie,
        },
        never_paths: match &file.never_paths {
            Some(list) => never_paths(check, list)?,
            None => defaults.never_paths,
        },
        privacy_pass: super::privacy_pass::settings(check, file.privacy_pass.as_ref())?,
    };
    match (settings.nonce_ttl <= settings.refresh_wait, &file.nonce_ttl) {
        (true, Some(at)) => Err(check.error(
            at,
            "`challenge.nonce_ttl` must be longer than `challenge.refresh_wait`: a `refresh` \
             page's nonce would expire before its reload"
                .to_owned(),
        )),
        (true, None) => Err(ConfigError::at(
            check.path,
            check.text,
            None,
            "`challenge.refresh_wait` must be shorter than `challenge.nonce_ttl` (5m by default)"
                .to_owned(),
        )),
        (false, _) => Ok(settings),
    }
}

/// `challenge.status`: 200, or a 4xx or 5xx (a page needs a status that carries a body and is
/// no redirect).
fn page_status(check: &Checker<'_>, status: &Spanned<i64>) -> Result<u16, ConfigError> {
    match *status.get_ref() {
        code @ (200 | 400..=599) => Ok(code as u16),
        other => Err(check.error(
            status,
            format!("`challenge.status` must be 200 or from 400 to 599, not {other}"),
        )),
    }
}

/// A duration of key `K` from 1 second up to `most`; `default` when not written.
fn bounded<K: Key>(
    check: &Checker<'_>,
    value: Option<&Spanned<Period<K>>>,
    default: Duration,
    most: Duration,
) -> Result<Duration, ConfigError> {
    let Some(at) = value else {
        return Ok(default);
    };
    let duration = at.get_ref().get();
    if duration < Duration::from_secs(1) || duration > most {
        let most = humantime::format_duration(most);
        return Err(check.error(at, format!("`{}` must be from 1s to {most}", K::NAME)));
    }
    Ok(duration)
}

fn never_paths(
    check: &Checker<'_>,
    list: &Spanned<Vec<String>>,
) -> Result<Vec<String>, ConfigError> {
    match PageRules::new(list.get_ref()) {
        Ok(_) => Ok(list.get_ref().clone()),
        Err(e) => Err(check.error(list, format!("`challenge.never_paths`: {e}"))),
    }
}

fn solution_path(check: &Checker<'_>, path: &Spanned<String>) -> Result<String, ConfigError> {
    let text = path.get_ref();
    let plain = text.starts_with('/')
        && text.len() > 1
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/-_.~".contains(&b));
    match plain {
        true => Ok(text.clone()),
        false => Err(check.error(
            path,
            format!(
                "`challenge.path` must be a plain path like `/.floodgate/challenge`, not `{text}`"
            ),
        )),
    }
}

fn cookie_name(check: &Checker<'_>, name: &Spanned<String>) -> Result<String, ConfigError> {
    let text = name.get_ref();
    let token = !text.is_empty()
        && text.len() <= 64
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    match token {
        true => Ok(text.clone()),
        false => Err(check.error(
            name,
            format!(
                "`challenge.cookie` must be 1 to 64 letters, digits, `-`, `_` or `.`, not `{text}`"
            ),
        )),
    }
}

mod line;
#[cfg(test)]
mod tests;
