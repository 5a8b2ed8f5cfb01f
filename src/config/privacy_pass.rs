//! `[challenge.privacy_pass]` → the issuers whose Privacy Pass tokens let a client past the
//! challenge: one table, or an array of tables (`[[challenge.privacy_pass]]`) for several. Each
//! names its `issuer`, its key (`token_key`) or its directory (`directory`, read again every
//! `refresh`), never both, and optionally the `origins` its challenges carry. Nothing is
//! fetched here.

use super::check::Checker;
use super::error::ConfigError;
use super::value::{config_keys, Key, Period};
use crate::privacy_pass::directory::DirectoryUrl;
use crate::privacy_pass::{
    DirectorySource, IssuerKey, IssuerSettings, KeySource, PrivacyPassSettings, MAX_ISSUER_NAME,
    MAX_ORIGIN_INFO,
};
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::time::Duration;
use toml::Spanned;

config_keys! {
    Refresh = "challenge.privacy_pass.refresh",
}

/// The longest `refresh`: a day (an issuer rotates its keys more often than that).
const MOST_REFRESH: Duration = Duration::from_secs(24 * 3600);

/// `[challenge.privacy_pass]` as written: one issuer's table, or an array of them.
#[derive(Debug)]
pub(crate) enum PrivacyPassFile {
    One(IssuerFile),
    Many(Vec<IssuerFile>),
}

/// One issuer as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct IssuerFile {
    issuer: Spanned<String>,
    token_key: Option<Spanned<String>>,
    directory: Option<Spanned<String>>,
    refresh: Option<Spanned<Period<Refresh>>>,
    origins: Option<Spanned<Vec<Spanned<String>>>>,
}

/// A table or an array, each read as itself, so an unknown key is still refused where it
/// stands with the list of known ones (an untagged enum would say only that neither fits).
impl<'de> Deserialize<'de> for PrivacyPassFile {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OneOrMany;
        impl<'de> Visitor<'de> for OneOrMany {
            type Value = PrivacyPassFile;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an issuer's table, or an array of them")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                IssuerFile::deserialize(MapAccessDeserializer::new(map)).map(PrivacyPassFile::One)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Vec::deserialize(SeqAccessDeserializer::new(seq)).map(PrivacyPassFile::Many)
            }
        }
        deserializer.deserialize_any(OneOrMany)
    }
}

/// The checked issuers, if `[challenge.privacy_pass]` is written.
pub(crate) fn settings(
    check: &Checker<'_>,
    file: Option<&Spanned<PrivacyPassFile>>,
) -> Result<Option<PrivacyPassSettings>, ConfigError> {
    let Some(file) = file else {
        return Ok(None);
    };
    let written: Vec<&IssuerFile> = match file.get_ref() {
        PrivacyPassFile::One(one) => vec![one],
        PrivacyPassFile::Many(many) => many.iter().collect(),
    };
    if written.is_empty() {
        let message = "`challenge.privacy_pass` names no issuer".to_owned();
        return Err(check.error(file, message));
    }
    let mut issuers: Vec<IssuerSettings> = Vec::new();
    for one in written {
        let settings = issuer(check, one)?;
        if issuers.iter().any(|i| i.issuer == settings.issuer) {
            let message = format!("issuer `{}` is named twice", settings.issuer);
            return Err(check.error(&one.issuer, message));
        }
        issuers.push(settings);
    }
    Ok(Some(PrivacyPassSettings { issuers }))
}

fn issuer(check: &Checker<'_>, file: &IssuerFile) -> Result<IssuerSettings, ConfigError> {
    let name = file.issuer.get_ref();
    if name.is_empty() || name.len() > MAX_ISSUER_NAME {
        let message = format!(
            "`challenge.privacy_pass.issuer` must have 1 to {MAX_ISSUER_NAME} bytes, not {}",
            name.len()
        );
        return Err(check.error(&file.issuer, message));
    }
    let keys = match (&file.token_key, &file.directory) {
        (Some(key), None) => KeySource::TokenKey(token_key(check, key)?),
        (None, Some(url)) => KeySource::Directory(directory(check, url, file.refresh.as_ref())?),
        (Some(_), Some(url)) => {
            let message =
                "`challenge.privacy_pass` takes `token_key` or `directory`, not both".to_owned();
            return Err(check.error(url, message));
        }
        (None, None) => {
            let message = "`challenge.privacy_pass` needs the issuer's key (`token_key`) or its \
                           directory's URL (`directory`)"
                .to_owned();
            return Err(check.error(&file.issuer, message));
        }
    };
    if let (KeySource::TokenKey(_), Some(refresh)) = (&keys, &file.refresh) {
        let message = "`challenge.privacy_pass.refresh` is for a `directory`: a `token_key` \
                       is never read again"
            .to_owned();
        return Err(check.error(refresh, message));
    }
    Ok(IssuerSettings {
        issuer: name.clone(),
        keys,
        origins: file
            .origins
            .as_ref()
            .map(|o| origins(check, o))
            .transpose()?,
    })
}

fn token_key(check: &Checker<'_>, text: &Spanned<String>) -> Result<IssuerKey, ConfigError> {
    IssuerKey::from_token_key(text.get_ref()).map_err(|e| {
        let message = format!(
            "`challenge.privacy_pass.token_key` must be an RSA 2048 RSASSA-PSS key \
             (base64url SubjectPublicKeyInfo, RFC 9578): {e}"
        );
        check.error(text, message)
    })
}

fn directory(
    check: &Checker<'_>,
    text: &Spanned<String>,
    refresh: Option<&Spanned<Period<Refresh>>>,
) -> Result<DirectorySource, ConfigError> {
    let url = DirectoryUrl::parse(text.get_ref()).map_err(|e| {
        let message = format!("`challenge.privacy_pass.directory` {e}");
        check.error(text, message)
    })?;
    let mut source = DirectorySource::new(url);
    if let Some(written) = refresh {
        let every = written.get_ref().get();
        if every < Duration::from_secs(1) || every > MOST_REFRESH {
            let message = format!("`{}` must be from 1s to 24h", Refresh::NAME);
            return Err(check.error(written, message));
        }
        source.refresh = every;
    }
    Ok(source)
}

/// Host names (a port after `:` allowed), lowercased.
fn origins(
    check: &Checker<'_>,
    list: &Spanned<Vec<Spanned<String>>>,
) -> Result<Vec<String>, ConfigError> {
    let mut names = Vec::new();
    for name in list.get_ref() {
        let text = name.get_ref();
        let host = !text.is_empty()
            && text.len() <= 253 + 6
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-.:[]_".contains(&b));
        if !host {
            let message = format!(
                "`challenge.privacy_pass.origins` takes host names like `example.com`, not `{text}`"
            );
            return Err(check.error(name, message));
        }
        names.push(text.to_ascii_lowercase());
    }
    let joined = names.iter().map(|n| n.len() + 1).sum::<usize>();
    if joined > MAX_ORIGIN_INFO + 1 {
        let message = format!(
            "`challenge.privacy_pass.origins` comes to {} bytes with its commas, over the \
             {MAX_ORIGIN_INFO} a challenge's `origin_info` holds",
            joined - 1
        );
        return Err(check.error(list, message));
    }
    Ok(names)
}

#[cfg(test)]
mod tests;
