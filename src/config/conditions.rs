//! A policy's `match.headers`, `match.user_agent` and `match.networks`.

use super::check::Checker;
use super::error::ConfigError;
use super::policy_table::PolicyMatchFile as MatchFile;
use crate::identity::Network;
use crate::policy::{Conditions, HeaderRule, UserAgent};
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
        proven: file.proven.as_ref().map(|p| *p.get_ref()),
    })
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

#[cfg(test)]
mod tests;
