//! `[crowdsec]` → the bouncer's settings: LAPI's URL and key file, the pull interval, the
//! decisions pulled and what a captcha decision does.

use super::check::Checker;
use super::error::ConfigError;
use super::value::{config_keys, Bounded, Period};
use crate::control::Remedy;
use crate::crowdsec::CrowdSecSettings;
use serde::Deserialize;
use std::fmt;
use std::time::Duration;
use toml::Spanned;

config_keys! {
    PollInterval = "crowdsec.poll_interval",
    MaxAnswerBytes = "crowdsec.max_answer_bytes",
}

/// `[crowdsec]`: the CrowdSec bouncer.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CrowdSecFile {
    pub(crate) url: Spanned<String>,
    pub(crate) api_key_file: Spanned<String>,
    pub(crate) poll_interval: Option<Spanned<Period<PollInterval>>>,
    pub(crate) scopes: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    pub(crate) origins: Vec<String>,
    #[serde(default)]
    pub(crate) scenarios_containing: Vec<String>,
    #[serde(default)]
    pub(crate) scenarios_not_containing: Vec<String>,
    pub(crate) on_captcha: Option<Spanned<String>>,
    pub(crate) max_answer_bytes: Option<Bounded<MaxAnswerBytes, 1024, { 1 << 32 }>>,
}

/// The checked `[crowdsec]` table.
pub(crate) fn crowdsec(
    check: &Checker<'_>,
    file: &CrowdSecFile,
) -> Result<CrowdSecSettings, ConfigError> {
    let url = file.url.get_ref();
    match url.parse::<http::Uri>() {
        Ok(uri) if matches!(uri.scheme_str(), Some("http" | "https")) && uri.host().is_some() => {}
        _ => {
            let message = format!("`crowdsec.url` must be an http:// or https:// URL, not `{url}`");
            return Err(check.error(&file.url, message));
        }
    }
    let poll_interval = match &file.poll_interval {
        Some(at) if at.get_ref().get() < Duration::from_secs(1) => {
            return Err(check.error(at, "`crowdsec.poll_interval` must be at least 1s".into()));
        }
        Some(at) => at.get_ref().get(),
        None => CrowdSecSettings::POLL_INTERVAL,
    };
    let scopes = match &file.scopes {
        Some(scopes) => {
            let list: Vec<String> = scopes.get_ref().iter().map(|s| s.to_lowercase()).collect();
            if let Some(odd) = list
                .iter()
                .find(|s| !CrowdSecSettings::SCOPES.contains(&s.as_str()))
            {
                let message = format!(
                    "`crowdsec.scopes`: `{odd}` cannot be applied by a proxy; use `ip` and `range`"
                );
                return Err(check.error(scopes, message));
            }
            if list.is_empty() {
                return Err(check.error(scopes, "`crowdsec.scopes` is empty".into()));
            }
            list
        }
        None => CrowdSecSettings::SCOPES.map(str::to_owned).to_vec(),
    };
    let on_captcha = match &file.on_captcha {
        None => Remedy::Challenge,
        Some(value) => match value.get_ref().as_str() {
            "challenge" => Remedy::Challenge,
            "ban" => Remedy::Ban,
            "throttle" => Remedy::Throttle,
            other => {
                let message = format!(
                    "`crowdsec.on_captcha` must be `challenge`, `ban` or `throttle`, not `{other}`"
                );
                return Err(check.error(value, message));
            }
        },
    };
    Ok(CrowdSecSettings {
        url: url.clone(),
        api_key_file: check
            .readable(&file.api_key_file, "crowdsec.api_key_file")?
            .into(),
        poll_interval,
        scopes,
        origins: file.origins.clone(),
        scenarios_containing: file.scenarios_containing.clone(),
        scenarios_not_containing: file.scenarios_not_containing.clone(),
        on_captcha,
        max_answer_bytes: match &file.max_answer_bytes {
            Some(n) => n.count() as u64,
            None => CrowdSecSettings::MAX_ANSWER_BYTES,
        },
    })
}

/// `--test`'s line for the CrowdSec bouncer.
pub(crate) struct CrowdSecLine<'a>(pub(crate) &'a CrowdSecSettings);

impl fmt::Display for CrowdSecLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cs = self.0;
        writeln!(
            f,
            "crowdsec        {} every {}s, scopes [{}], captcha → {}",
            cs.url,
            cs.poll_interval.as_secs(),
            cs.scopes.join(", "),
            cs.on_captcha.word()
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use crate::control::Remedy;
    use std::path::Path;
    use std::time::Duration;

    const BASE: &str =
        "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n";

    #[test]
    fn the_crowdsec_table_has_crowdsecs_defaults_and_refuses_bad_values_where_they_are() {
        let key = tempfile::NamedTempFile::new().unwrap();
        let key = key.path().display();
        let table =
            format!("[crowdsec]\nurl = \"http://127.0.0.1:8080/\"\napi_key_file = \"{key}\"\n");
        let config = parse(&format!("{BASE}{table}"), Path::new("t.toml")).unwrap();
        let settings = config.crowdsec.unwrap();
        assert_eq!(settings.poll_interval, Duration::from_secs(10));
        assert_eq!(settings.scopes, ["ip", "range"]);
        assert_eq!(settings.on_captcha, Remedy::Challenge);
        assert_eq!(settings.max_answer_bytes, 16 << 20);
        for (extra, message) in [
            ("poll_interval = \"10ms\"\n", "at least 1s"),
            (
                "scopes = [\"ip\", \"country\"]\n",
                "`country` cannot be applied",
            ),
            ("on_captcha = \"captcha\"\n", "`crowdsec.on_captcha`"),
            ("max_answer_bytes = 10\n", "`crowdsec.max_answer_bytes`"),
            ("colour = \"red\"\n", "unknown field"),
        ] {
            let e = parse(&format!("{BASE}{table}{extra}"), Path::new("t.toml"))
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("t.toml:") && e.contains(message), "{e}");
        }
        let bad_url =
            format!("{BASE}[crowdsec]\nurl = \"127.0.0.1:8080\"\napi_key_file = \"{key}\"\n");
        let e = parse(&bad_url, Path::new("t.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`crowdsec.url`"), "{e}");
        let no_key = format!(
            "{BASE}[crowdsec]\nurl = \"http://lapi:8080\"\napi_key_file = \"/nonexistent/key\"\n"
        );
        let e = parse(&no_key, Path::new("t.toml")).unwrap_err().to_string();
        assert!(e.contains("`crowdsec.api_key_file`"), "{e}");
    }
}
