//! `[tls.acme]`: certificates ordered from an ACME CA, and the listeners they need.

use super::check::Checker;
use super::error::ConfigError;
use super::runtime::ServerSettings;
use super::value::{config_keys, Period};
use crate::acme::{AcmeSettings, ChallengeType, Eab, LETS_ENCRYPT};
use crate::limiter::StoreSettings;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::Deserialize;
use toml::Spanned;

config_keys! {
    RenewBefore = "tls.acme.renew_before",
}

/// `[tls]`: what the TLS listener's certificates come from besides files.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TlsFile {
    pub(crate) acme: Option<Spanned<AcmeFile>>,
}

/// `[tls.acme]`: certificates ordered from an ACME CA.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AcmeFile {
    pub(crate) directory: Option<Spanned<String>>,
    pub(crate) email: Option<Spanned<String>>,
    pub(crate) domains: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) challenge: Option<Spanned<String>>,
    pub(crate) ca_file: Option<Spanned<String>>,
    pub(crate) renew_before: Option<Period<RenewBefore>>,
    pub(crate) eab_kid: Option<Spanned<String>>,
    pub(crate) eab_hmac_key_file: Option<Spanned<String>>,
    pub(crate) state_dir: Option<Spanned<String>>,
}

/// The most domains one instance keeps certificates for (one order each).
const MAX_DOMAINS: usize = 100;

/// `[tls.acme]`'s settings, when the table is there; checks that a TLS listener without
/// certificate files has it.
pub(crate) fn settings(
    check: &Checker<'_>,
    file: Option<&TlsFile>,
    server: &ServerSettings,
    store: &StoreSettings,
) -> Result<Option<AcmeSettings>, ConfigError> {
    let Some(table) = file.and_then(|f| f.acme.as_ref()) else {
        if server.tls.as_ref().is_some_and(|tls| tls.files.is_none()) {
            let message = "`server.tls_listen` needs certificates: `server.tls_cert_file` and \
                           `tls_key_file`, or a `[tls.acme]` table"
                .to_owned();
            return Err(ConfigError::at(check.path, check.text, None, message));
        }
        return Ok(None);
    };
    if server.tls.is_none() {
        let message = "`[tls.acme]` needs `server.tls_listen`: the listener its certificates \
                       are served on"
            .to_owned();
        return Err(check.error(table, message));
    }
    let acme = table.get_ref();
    Ok(Some(AcmeSettings {
        directory: directory(check, acme)?,
        email: email(check, table)?,
        domains: domains(check, table)?,
        challenge: challenge(check, acme, server)?,
        ca_file: match &acme.ca_file {
            Some(path) => Some(check.readable(path, "tls.acme.ca_file")?.into()),
            None => None,
        },
        renew_before: acme.renew_before.as_ref().map(Period::get),
        eab: eab(check, table)?,
        state_dir: state_dir(check, table, store)?,
    }))
}

fn directory(check: &Checker<'_>, acme: &AcmeFile) -> Result<String, ConfigError> {
    let Some(url) = &acme.directory else {
        return Ok(LETS_ENCRYPT.to_owned());
    };
    match url.get_ref().parse::<http::Uri>() {
        Ok(uri) if uri.scheme_str() == Some("https") && uri.host().is_some() => {
            Ok(url.get_ref().clone())
        }
        _ => {
            let message = format!(
                "`tls.acme.directory` must be an https:// URL of an ACME directory, not `{}`",
                url.get_ref()
            );
            Err(check.error(url, message))
        }
    }
}

fn email(check: &Checker<'_>, table: &Spanned<AcmeFile>) -> Result<String, ConfigError> {
    let Some(email) = &table.get_ref().email else {
        let message = "`tls.acme.email` is required: the CA writes there about the account \
                       and its certificates"
            .to_owned();
        return Err(check.error(table, message));
    };
    let text = email.get_ref();
    let valid = text.split_once('@').is_some_and(|(user, host)| {
        !user.is_empty()
            && host.contains('.')
            && dns_name(host)
            && !text
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || c == ',')
    });
    match valid {
        true => Ok(text.clone()),
        false => Err(check.error(
            email,
            format!("`tls.acme.email`: `{text}` is not an email address"),
        )),
    }
}

fn domains(check: &Checker<'_>, table: &Spanned<AcmeFile>) -> Result<Vec<String>, ConfigError> {
    let Some(list) = &table.get_ref().domains else {
        let message =
            "`tls.acme.domains` is required: the names to order certificates for".to_owned();
        return Err(check.error(table, message));
    };
    if list.get_ref().is_empty() {
        let message = "`tls.acme.domains` is empty: name at least one domain".to_owned();
        return Err(check.error(list, message));
    }
    if list.get_ref().len() > MAX_DOMAINS {
        let message = format!("`tls.acme.domains`: at most {MAX_DOMAINS} domains");
        return Err(check.error(list, message));
    }
    let mut domains: Vec<String> = Vec::new();
    for name in list.get_ref() {
        let text = name.get_ref().to_ascii_lowercase();
        if text.starts_with("*.") {
            let message = format!(
                "`tls.acme.domains`: `{text}` is a wildcard, which needs DNS-01; list each name"
            );
            return Err(check.error(name, message));
        }
        if !dns_name(&text) || !text.contains('.') || text.parse::<std::net::IpAddr>().is_ok() {
            let message = format!("`tls.acme.domains`: `{}` is not a DNS name", name.get_ref());
            return Err(check.error(name, message));
        }
        if domains.contains(&text) {
            let message = format!("`tls.acme.domains`: `{text}` is listed twice");
            return Err(check.error(name, message));
        }
        domains.push(text);
    }
    Ok(domains)
}

/// Whether `name` is a DNS name of letters, digits and hyphens (lowercase), dot-separated.
fn dns_name(name: &str) -> bool {
    name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        })
}

/// The challenge type: as configured, else TLS-ALPN-01 (answered on the TLS listener, which
/// `[tls.acme]` needs); HTTP-01 is refused without the plain listener it is answered on.
fn challenge(
    check: &Checker<'_>,
    acme: &AcmeFile,
    server: &ServerSettings,
) -> Result<ChallengeType, ConfigError> {
    let Some(word) = &acme.challenge else {
        return Ok(ChallengeType::TlsAlpn01);
    };
    let kind = ChallengeType::ALL
        .into_iter()
        .find(|k| k.word() == word.get_ref())
        .ok_or_else(|| {
            let message = format!(
                "`tls.acme.challenge` must be `tls-alpn-01` or `http-01`, not `{}`",
                word.get_ref()
            );
            check.error(word, message)
        })?;
    let missing = match kind {
        ChallengeType::Http01 if server.listen.is_none() => {
            Some("`server.listen` (with an `[upstream]`)")
        }
        _ => None,
    };
    match missing {
        Some(listener) => {
            let message = format!(
                "`tls.acme.challenge = \"{}\"` is answered on {listener}, which is not configured",
                kind.word()
            );
            Err(check.error(word, message))
        }
        None => Ok(kind),
    }
}

fn eab(check: &Checker<'_>, table: &Spanned<AcmeFile>) -> Result<Option<Eab>, ConfigError> {
    let acme = table.get_ref();
    match (&acme.eab_kid, &acme.eab_hmac_key_file) {
        (None, None) => Ok(None),
        (Some(kid), Some(path)) => {
            let file = check.readable(path, "tls.acme.eab_hmac_key_file")?;
            let text = std::fs::read_to_string(&file)
                .map_err(|e| check.error(path, format!("`tls.acme.eab_hmac_key_file`: {e}")))?;
            let hmac_key = URL_SAFE_NO_PAD
                .decode(text.trim().trim_end_matches('='))
                .ok()
                .filter(|key| !key.is_empty())
                .ok_or_else(|| {
                    let message = "`tls.acme.eab_hmac_key_file` must hold the CA's HMAC key in \
                                   base64url"
                        .to_owned();
                    check.error(path, message)
                })?;
            Ok(Some(Eab {
                kid: kid.get_ref().clone(),
                hmac_key,
            }))
        }
        (Some(at), None) | (None, Some(at)) => {
            let message = "`tls.acme.eab_kid` and `eab_hmac_key_file` go together".to_owned();
            Err(check.error(at, message))
        }
    }
}

/// Where the state is kept on the memory store (required there); refused on Redis, which
/// keeps it for the fleet.
fn state_dir(
    check: &Checker<'_>,
    table: &Spanned<AcmeFile>,
    store: &StoreSettings,
) -> Result<Option<std::path::PathBuf>, ConfigError> {
    let dir = &table.get_ref().state_dir;
    match (store, dir) {
        (StoreSettings::Memory { .. }, Some(dir)) => Ok(Some(check.resolve(dir.get_ref()))),
        (StoreSettings::Memory { .. }, None) => {
            let message = "`tls.acme.state_dir` is required on the memory store: the directory \
                           the account and certificates are kept in across restarts (files \
                           0600)"
                .to_owned();
            Err(check.error(table, message))
        }
        (StoreSettings::Redis(_), Some(dir)) => {
            let message = "`tls.acme.state_dir` is for the memory store: on redis the fleet \
                           keeps the account and certificates in redis"
                .to_owned();
            Err(check.error(dir, message))
        }
        (StoreSettings::Redis(_), None) => Ok(None),
    }
}

#[cfg(test)]
mod tests;
