//! `[challenge.privacy_pass]`, checked: the issuers whose tokens are taken, each with its key
//! or its directory (and how often that is read), and the origins its challenges name.

use super::challenge::ChallengeError;
use super::directory::{DirectoryUrl, DEFAULT_REFRESH};
use super::issuer::Issuer;
use super::key::IssuerKey;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Where an issuer's keys come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// `token_key`: one key, as configured.
    TokenKey(IssuerKey),
    /// `directory`: the keys its directory lists, refreshed.
    Directory(DirectorySource),
}

/// An issuer's directory, as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectorySource {
    /// `directory`: where it is.
    pub url: DirectoryUrl,
    /// `refresh`: how often it is read again ([`DEFAULT_REFRESH`] unless written).
    pub refresh: Duration,
}

impl DirectorySource {
    /// The directory at `url`, read again every [`DEFAULT_REFRESH`].
    pub fn new(url: DirectoryUrl) -> Self {
        Self {
            url,
            refresh: DEFAULT_REFRESH,
        }
    }
}

/// One issuer, as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuerSettings {
    /// `issuer`: the name its challenges carry (1 to 255 bytes).
    pub issuer: String,
    /// `token_key` or `directory`.
    pub keys: KeySource,
    /// `origins`: the origin names its challenges carry and its tokens must answer; `None`
    /// when not written (the config's own hosts are then meant), an empty list for tokens good
    /// at any origin.
    pub origins: Option<Vec<String>>,
}

/// The issuers whose tokens let a client past the challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrivacyPassSettings {
    /// At least one, each named once.
    pub issuers: Vec<IssuerSettings>,
}

impl PrivacyPassSettings {
    /// The issuers at work, in the configured order (see [`IssuerSettings::issuer`]); the
    /// directory of each, if any, is `self.issuers[i].directory()`.
    pub fn issuers(&self, default_origins: &[String]) -> Result<Vec<Arc<Issuer>>, ChallengeError> {
        self.issuers
            .iter()
            .map(|i| i.issuer(default_origins).map(Arc::new))
            .collect()
    }
}

impl IssuerSettings {
    /// The issuer at work: its challenges name its `origins`, or `default_origins` when it
    /// has none written. An issuer of a directory starts with no key (until the directory is
    /// read).
    pub fn issuer(&self, default_origins: &[String]) -> Result<Issuer, ChallengeError> {
        let keys = match &self.keys {
            KeySource::TokenKey(key) => vec![key.clone()],
            KeySource::Directory(_) => Vec::new(),
        };
        let origins = self.origins.as_deref().unwrap_or(default_origins);
        Issuer::new(&self.issuer, keys, origins)
    }

    /// Its directory, if its keys come from one.
    pub fn directory(&self) -> Option<&DirectorySource> {
        match &self.keys {
            KeySource::Directory(source) => Some(source),
            KeySource::TokenKey(_) => None,
        }
    }
}

impl fmt::Display for IssuerSettings {
    /// `--test`'s words for it: `issuer.example (key 1a2b3c4d…, origins a.example)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (", self.issuer)?;
        match &self.keys {
            KeySource::TokenKey(key) => {
                let id: String = key.key_id()[..4]
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                write!(f, "key {id}…")?;
            }
            KeySource::Directory(source) => {
                write!(f, "keys from {}", source.url)?;
                if source.refresh != DEFAULT_REFRESH {
                    let every = humantime::format_duration(source.refresh);
                    write!(f, " every {every}")?;
                }
            }
        }
        match &self.origins {
            None => f.write_str(", origins: the config's hosts)"),
            Some(list) if list.is_empty() => f.write_str(", any origin)"),
            Some(list) => write!(f, ", origins {})", list.join(" ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::privacy_pass::test_issuer::TestIssuer;

    fn settings(keys: KeySource, origins: Option<Vec<String>>) -> IssuerSettings {
        IssuerSettings {
            issuer: "issuer.example".into(),
            keys,
            origins,
        }
    }

    #[test]
    fn an_issuer_takes_its_origins_or_the_default_and_its_key() {
        let key = IssuerKey::from_token_key(&TestIssuer::a().token_key()).unwrap();
        let own = settings(
            KeySource::TokenKey(key.clone()),
            Some(vec!["a.example".into()]),
        );
        let issuer = own.issuer(&["x.example".into()]).unwrap();
        assert_eq!(issuer.origin_info(), "a.example");
        assert_eq!(*issuer.keys(), std::slice::from_ref(&key));
        assert!(own.to_string().starts_with("issuer.example (key "), "{own}");
        let url = DirectoryUrl::parse("https://issuer.example/d").unwrap();
        let fleet = settings(
            KeySource::Directory(DirectorySource::new(url.clone())),
            None,
        );
        let issuer = fleet
            .issuer(&["x.example".into(), "y.example".into()])
            .unwrap();
        assert_eq!(issuer.origin_info(), "x.example,y.example");
        assert!(issuer.keys().is_empty(), "until the directory is read");
        assert_eq!(fleet.directory().map(|d| &d.url), Some(&url));
        assert_eq!(
            fleet.to_string(),
            "issuer.example (keys from https://issuer.example/d, origins: the config's hosts)"
        );
        let often = DirectorySource {
            url,
            refresh: Duration::from_secs(90),
        };
        let any = settings(KeySource::Directory(often), Some(vec![]));
        assert_eq!(any.issuer(&["x.example".into()]).unwrap().origin_info(), "");
        assert_eq!(
            any.to_string(),
            "issuer.example (keys from https://issuer.example/d every 1m 30s, any origin)"
        );
        let all = PrivacyPassSettings {
            issuers: vec![own, fleet],
        };
        let issuers = all.issuers(&["x.example".into()]).unwrap();
        assert_eq!(issuers.len(), 2);
        assert_eq!(issuers[1].origin_info(), "x.example");
        let too_many: Vec<String> = (0..300).map(|i| format!("{i:0>250}")).collect();
        assert!(all.issuers(&too_many).is_err(), "origin_info over 64 KiB");
    }
}
