//! A policy's `match.headers`, `match.user_agent` and `match.networks`, and its `action`.

use super::check::Checker;
use super::error::ConfigError;
use super::policy_table::{PolicyFile, PolicyMatchFile as MatchFile};
use crate::identity::Network;
use crate::policy::{Action, Conditions, HeaderRule, Limits, Rate, UserAgent};
use http::HeaderName;
use ipnet::IpNet;
use regex::Regex;
use toml::Spanned;

/// The conditions of a policy's `match` or `unless` table (`table`, named in errors; none
/// when there is no table).
pub(crate) fn conditions(
    check: &Checker<'_>,
    file: Option<&MatchFile>,
    table: &str,
) -> Result<Conditions, ConfigError> {
    let Some(file) = file else {
        return Ok(Conditions::default());
    };
    let user_agent = format!("{table}.user_agent");
    Ok(Conditions {
        headers: headers(check, file, table)?,
        user_agent: match &file.user_agent {
            Some(text) => Some(UserAgent(regex(check, text, &user_agent)?)),
            None => None,
        },
        networks: networks(check, file, table)?,
        sender: super::sender::sender(check, file, table)?,
    })
}

/// The policy's `action`: `limit` when not given.
pub(crate) fn action(check: &Checker<'_>, file: &PolicyFile) -> Result<Action, ConfigError> {
    let Some(word) = &file.action else {
        return Ok(super::overload::default_action(file));
    };
    match Action::from_word(word.get_ref()) {
        Some(Action::Challenge(_)) => {
            Ok(Action::Challenge(super::challenge::of_action(check, file)?))
        }
        Some(action) => Ok(action),
        None => {
            let message = format!(
                "`policy.action` must be `limit`, `deny`, `allow`, `challenge` or `classify`, not `{}`",
                word.get_ref()
            );
            Err(check.error(word, message))
        }
    }
}

/// Refuses, where it stands, the first key of a `deny` or `allow` policy that only a `limit`
/// policy uses (its bucket, cost and rules): such a policy takes from no bucket.
pub(crate) fn no_bucket_keys(
    check: &Checker<'_>,
    file: &PolicyFile,
    action: Action,
) -> Result<(), ConfigError> {
    if action == Action::Limit {
        return Ok(());
    }
    let given = [
        ("capacity", file.capacity.as_ref().map(Spanned::span)),
        ("rate", file.rate.as_ref().map(Spanned::span)),
        ("quota", file.quota.as_ref().map(Spanned::span)),
        ("period", file.period.as_ref().map(Spanned::span)),
        ("cost", file.cost.as_ref().map(Spanned::span)),
        ("tier", file.tier.as_ref().map(Spanned::span)),
        ("cost_header", file.cost_header.as_ref().map(Spanned::span)),
        (
            "count_status",
            file.count_status.as_ref().map(Spanned::span),
        ),
        (
            "settle_header",
            file.settle_header.as_ref().map(Spanned::span),
        ),
        (
            "max_in_flight",
            file.max_in_flight.as_ref().map(Spanned::span),
        ),
        ("max_delay", file.max_delay.as_ref().map(Spanned::span)),
        ("block_for", file.block_for.as_ref().map(Spanned::span)),
        ("on_limit", file.on_limit.as_ref().map(Spanned::span)),
    ];
    match given.into_iter().find(|(_, at)| at.is_some()) {
        None => Ok(()),
        Some((key, at)) => {
            let message = format!(
                "`policy.{key}` is for `limit` policies: a `{action}` policy takes from no bucket"
            );
            Err(ConfigError::at(check.path, check.text, at, message))
        }
    }
}

fn headers(
    check: &Checker<'_>,
    file: &MatchFile,
    table: &str,
) -> Result<Vec<(HeaderName, HeaderRule)>, ConfigError> {
    let Some(given) = &file.headers else {
        return Ok(Vec::new());
    };
    given
        .get_ref()
        .iter()
        .map(|(name, value)| header(check, name, value, table))
        .collect()
}

fn header(
    check: &Checker<'_>,
    name: &str,
    value: &Spanned<toml::Value>,
    table: &str,
) -> Result<(HeaderName, HeaderRule), ConfigError> {
    let key = format!("{table}.headers.{name}");
    let header = HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes())
        .map_err(|_| check.error(value, format!("`{key}`: `{name}` is not a header name")))?;
    let rule = match value.get_ref() {
        toml::Value::Boolean(true) => HeaderRule::Present,
        toml::Value::Boolean(false) => HeaderRule::Absent,
        toml::Value::String(text) => HeaderRule::Matches(
            Regex::new(text).map_err(|e| check.error(value, format!("`{key}`: {e}")))?,
        ),
        other => {
            let message = format!(
                "`{key}` must be true (present), false (absent) or a regex string (found {})",
                other.type_str()
            );
            return Err(check.error(value, message));
        }
    };
    Ok((header, rule))
}

fn regex(check: &Checker<'_>, text: &Spanned<String>, key: &str) -> Result<Regex, ConfigError> {
    Regex::new(text.get_ref()).map_err(|e| check.error(text, format!("`{key}`: {e}")))
}

fn networks(check: &Checker<'_>, file: &MatchFile, table: &str) -> Result<Vec<IpNet>, ConfigError> {
    let Some(list) = &file.networks else {
        return Ok(Vec::new());
    };
    let key = format!("{table}.networks");
    if list.get_ref().is_empty() {
        let message = format!("`{key}` needs at least one network");
        return Err(check.error(list, message));
    }
    list.get_ref()
        .iter()
        .map(|text| {
            let network = Network::read(text.get_ref()).ok_or_else(|| {
                let message = format!(
                    "`{key}`: `{}` is not a network (CIDR) or address",
                    text.get_ref()
                );
                check.error(text, message)
            })?;
            check.host_bits(text, text.get_ref(), &key);
            Ok(network.net)
        })
        .collect()
}

/// The limits of a `deny` or `allow` policy given none: never drawn on, since such a policy
/// takes from no bucket.
pub(crate) fn unused_limits() -> Limits {
    let rate: Rate = "1/s".parse().expect("a constant rate");
    Limits::new(1, rate).expect("a constant bucket")
}

#[cfg(test)]
mod tests;
