//! `[decisions]` → how many decisions each instance keeps to explain (`GET /v1/decisions/{ref}`)
//! and for how long.

use super::check::Checker;
use super::error::ConfigError;
use crate::explain::{DecisionSettings, DEFAULT_KEEP, DEFAULT_MAX_AGE};
use serde::Deserialize;
use std::time::Duration;
use toml::Spanned;

/// `[decisions]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DecisionsFile {
    pub(crate) keep: Option<Spanned<i64>>,
    pub(crate) max_age: Option<Spanned<String>>,
}

/// The most records an instance may keep.
const MOST: i64 = 1_000_000;
/// The longest a record may be kept.
const LONGEST: Duration = Duration::from_secs(24 * 3600);

/// The checked `[decisions]` table (its defaults when it is absent).
pub(crate) fn decisions(
    check: &Checker<'_>,
    file: Option<&DecisionsFile>,
) -> Result<DecisionSettings, ConfigError> {
    let Some(file) = file else {
        return Ok(DecisionSettings::default());
    };
    let keep = match &file.keep {
        Some(keep) => check.integer(keep, "decisions.keep", 0..=MOST)? as usize,
        None => DEFAULT_KEEP,
    };
    let max_age = check.duration(file.max_age.as_ref(), "decisions.max_age", DEFAULT_MAX_AGE)?;
    if let (Some(text), false) = (
        &file.max_age,
        (Duration::from_secs(1)..=LONGEST).contains(&max_age),
    ) {
        let message = "`decisions.max_age` must be from 1s to 24h".to_owned();
        return Err(check.error(text, message));
    }
    Ok(DecisionSettings { keep, max_age })
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use std::path::Path;

    fn load(text: &str) -> Result<crate::config::Config, String> {
        let base =
            "[server]\nlisten = \"127.0.0.1:8080\"\n[upstream]\nbackends = [\"127.0.0.1:9\"]\n";
        parse(&format!("{base}{text}"), Path::new("t.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn decisions_are_kept_by_default_and_as_configured() {
        let config = load("").unwrap();
        assert_eq!(config.decisions.keep, 10_000);
        assert_eq!(config.decisions.max_age.as_secs(), 900);
        let config = load("[decisions]\nkeep = 0\nmax_age = \"1h\"\n").unwrap();
        assert_eq!(config.decisions.keep, 0);
        assert_eq!(config.decisions.max_age.as_secs(), 3600);
    }

    #[test]
    fn bad_values_are_located() {
        let e = load("[decisions]\nkeep = -1\n").unwrap_err();
        assert!(
            e.starts_with("t.toml:6:8: `decisions.keep` must be between 0"),
            "{e}"
        );
        let e = load("[decisions]\nmax_age = \"2d\"\n").unwrap_err();
        assert!(
            e.starts_with("t.toml:6:11: `decisions.max_age` must be from 1s"),
            "{e}"
        );
        let e = load("[decisions]\nkept = 1\n").unwrap_err();
        assert!(e.contains("kept"), "{e}");
    }
}
