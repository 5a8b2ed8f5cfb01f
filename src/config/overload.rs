//! `[overload]` → overload protection's settings, and a policy's `priority` and
//! `on_overload`.

use super::action::ActionWord;
use super::check::Checker;
use super::error::ConfigError;
use super::policy_table::PolicyFile;
use super::value::{config_keys, Bounded, Period};
use crate::overload::{
    MaxInFlight, OverloadSettings, DEFAULT_CEILING, DEFAULT_MIN_IN_FLIGHT, DEFAULT_QUEUE_TIME,
    MAX_QUEUE_TIME,
};
use crate::policy::{OverloadClass, Priority};
use serde::Deserialize;
use std::fmt;
use toml::Spanned;

config_keys! {
    MinInFlight = "overload.min_in_flight",
    AutoCeiling = "overload.auto_ceiling",
    LatencyTarget = "overload.latency_target",
    QueueTime = "overload.queue_time",
    MaxQueued = "overload.max_queued",
}

/// `[overload]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OverloadFile {
    pub(crate) max_in_flight: Option<Spanned<toml::Value>>,
    pub(crate) min_in_flight: Option<Spanned<Bounded<MinInFlight, 1, MOST>>>,
    pub(crate) auto_ceiling: Option<Spanned<Bounded<AutoCeiling, 1, MOST>>>,
    pub(crate) latency_target: Option<Spanned<Period<LatencyTarget>>>,
    pub(crate) queue_time: Option<Spanned<Period<QueueTime>>>,
    pub(crate) max_queued: Option<Bounded<MaxQueued, 0, MOST>>,
}

/// The most requests a pool may be given at once, or wait for it.
const MOST: i64 = 1_000_000;

/// The checked `[overload]` table.
pub(crate) fn overload(
    check: &Checker<'_>,
    file: &OverloadFile,
) -> Result<OverloadSettings, ConfigError> {
    let max_in_flight = max_in_flight(check, file)?;
    let latency_target = match &file.latency_target {
        Some(text) if text.get_ref().get().is_zero() => {
            let message = "`overload.latency_target` must be above 0".to_owned();
            return Err(check.error(text, message));
        }
        Some(text) => Some(text.get_ref().get()),
        None => None,
    };
    let queue_time = file
        .queue_time
        .as_ref()
        .map_or(DEFAULT_QUEUE_TIME, |t| t.get_ref().get());
    if let (Some(text), true) = (&file.queue_time, queue_time > MAX_QUEUE_TIME) {
        let message = format!(
            "`overload.queue_time` must be at most {}s: a request held longer is better told to come back",
            MAX_QUEUE_TIME.as_secs()
        );
        return Err(check.error(text, message));
    }
    let max_queued = file.max_queued.as_ref().map(|n| n.count() as u32);
    Ok(OverloadSettings {
        max_in_flight,
        latency_target,
        queue_time,
        max_queued,
    })
}

/// `max_in_flight`: a whole number from 1, or `"auto"` (the default) with its floor and
/// ceiling.
fn max_in_flight(check: &Checker<'_>, file: &OverloadFile) -> Result<MaxInFlight, ConfigError> {
    let fixed = match file.max_in_flight.as_ref().map(|v| (v, v.get_ref())) {
        None => None,
        Some((_, toml::Value::String(word))) if word == "auto" => None,
        Some((value, toml::Value::Integer(n))) if (1..=MOST).contains(n) => {
            Some((value, *n as u32))
        }
        Some((value, other)) => {
            let found = match other {
                toml::Value::Integer(n) => n.to_string(),
                toml::Value::String(s) => format!("\"{s}\""),
                other => format!("a {}", other.type_str()),
            };
            let message = format!(
                "`overload.max_in_flight` must be a whole number from 1 to {MOST} (the backends' \
                 total across the fleet) or \"auto\", not {found}"
            );
            return Err(check.error(value, message));
        }
    };
    let auto_keys = [
        (
            "min_in_flight",
            file.min_in_flight.as_ref().map(Spanned::span),
        ),
        (
            "auto_ceiling",
            file.auto_ceiling.as_ref().map(Spanned::span),
        ),
    ];
    if let Some((_, fixed_at)) = fixed {
        if let Some((key, Some(at))) = auto_keys.into_iter().find(|(_, v)| v.is_some()) {
            let message = format!(
                "`overload.{key}` is for `max_in_flight = \"auto\"`: a fixed `max_in_flight` \
                 ({fixed_at}) is the limit"
            );
            return Err(ConfigError::at(check.path, check.text, Some(at), message));
        }
    }
    if let Some((_, n)) = fixed {
        return Ok(MaxInFlight::Fleet(n));
    }
    let floor = match &file.min_in_flight {
        Some(n) => n.get_ref().count() as u32,
        None => DEFAULT_MIN_IN_FLIGHT,
    };
    let ceiling = match &file.auto_ceiling {
        Some(n) => {
            let ceiling = n.get_ref().count() as u32;
            if ceiling < floor {
                let message = format!(
                    "`overload.auto_ceiling` ({ceiling}) is below `overload.min_in_flight` ({floor})"
                );
                return Err(check.error(n, message));
            }
            ceiling
        }
        None => DEFAULT_CEILING.max(floor),
    };
    Ok(MaxInFlight::Auto { floor, ceiling })
}

/// A policy's `priority` and `on_overload` (`"shed"`, the default, or `"challenge"` with the
/// policy's challenge keys). `on_overload = "challenge"` needs requests that can be pages:
/// a policy matching only methods other than GET and HEAD is refused.
pub(crate) fn class(check: &Checker<'_>, file: &PolicyFile) -> Result<OverloadClass, ConfigError> {
    let priority = match &file.priority {
        Some(word) => Some(Priority::from_word(word.get_ref()).ok_or_else(|| {
            let message = format!(
                "`policy.priority` must be `critical`, `high`, `normal` or `low`, not `{}`",
                word.get_ref()
            );
            check.error(word, message)
        })?),
        None => None,
    };
    let on_overload = match &file.on_overload {
        None => None,
        Some(word) => match word.get_ref().as_str() {
            "shed" => None,
            "challenge" => {
                never_pages(check, file, word)?;
                Some(super::challenge::of_overload(check, file)?)
            }
            other => {
                let message =
                    format!("`policy.on_overload` must be `shed` or `challenge`, not `{other}`");
                return Err(check.error(word, message));
            }
        },
    };
    Ok(OverloadClass {
        priority,
        on_overload,
    })
}

/// Refuses `on_overload = "challenge"` (at `word`) on a policy whose requests can never be
/// page loads: one matching only methods other than GET and HEAD, or a `deny` policy.
fn never_pages(
    check: &Checker<'_>,
    file: &PolicyFile,
    word: &Spanned<String>,
) -> Result<(), ConfigError> {
    let methods = file.route.as_ref().and_then(|m| m.methods.as_ref());
    let only_others = methods.is_some_and(|list| {
        !list.is_empty()
            && list
                .iter()
                .all(|m| !matches!(m.get_ref().to_ascii_uppercase().as_str(), "GET" | "HEAD"))
    });
    let denies = file
        .action
        .as_ref()
        .and_then(|a| ActionWord::from_word(a.get_ref()))
        .is_some_and(|a| a == ActionWord::Deny);
    if only_others || denies {
        let why = match denies {
            true => "a `deny` policy forwards nothing",
            false => "its `match.methods` has neither GET nor HEAD, and a challenge page answers only page loads",
        };
        let message = format!(
            "`policy.on_overload = \"challenge\"` cannot apply: {why}; use `on_overload = \"shed\"`"
        );
        return Err(check.error(word, message));
    }
    Ok(())
}

/// `--test`'s line for overload protection.
pub(crate) struct OverloadLine<'a>(pub(crate) &'a OverloadSettings);

impl fmt::Display for OverloadLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let o = self.0;
        let limit = match o.max_in_flight {
            MaxInFlight::Fleet(n) => {
                format!("{n} in flight per pool across the fleet (each instance its share)")
            }
            MaxInFlight::Auto { floor, ceiling } => {
                format!("an adaptive limit per pool from {floor} to {ceiling} in flight")
            }
        };
        let target = match o.latency_target {
            Some(t) => format!(", overloaded above {t:?}"),
            None => String::new(),
        };
        let queued = match o.max_queued {
            Some(n) => format!("{n} waiting"),
            None => "4 × the limit waiting (at least 16)".to_owned(),
        };
        writeln!(
            f,
            "overload        {limit}{target}; {queued}, each at most {:?}; shed 503 after Retry-After {}s",
            o.queue_time,
            o.retry_after_s()
        )
    }
}

#[cfg(test)]
mod tests;
