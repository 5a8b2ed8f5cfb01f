//! `[bots.score]` → the signals' weights (`weights = { signal = N }` over the defaults; 0
//! turns a signal off) and the hosting networks added to the shipped list (`hosting_asns`).

use super::check::Checker;
use super::error::ConfigError;
use crate::bots::score::refresh::BROWSERS_FILE;
use crate::bots::score::{Published, ScoreSettings, Weights};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use toml::Spanned;
use values::{SignalName, Weight};

/// `[bots.score]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScoreFile {
    #[serde(default)]
    pub(crate) weights: BTreeMap<SignalName, Weight>,
    pub(crate) hosting_asns: Option<Spanned<Vec<Spanned<toml::Value>>>>,
}

/// The checked `[bots.score]` (the defaults when it is absent).
pub(crate) fn score(
    check: &Checker<'_>,
    file: Option<&ScoreFile>,
    ranges_dir: Option<&Spanned<String>>,
) -> Result<ScoreSettings, ConfigError> {
    let published = updated_lists(check, ranges_dir)?;
    let Some(file) = file else {
        return Ok(ScoreSettings {
            published,
            ..ScoreSettings::default()
        });
    };
    let weights = file
        .weights
        .iter()
        .fold(Weights::default(), |weights, (signal, weight)| {
            weights.with(signal.0, weight.0)
        });
    let hosting_asns = match &file.hosting_asns {
        Some(list) => list
            .get_ref()
            .iter()
            .map(|value| super::sender::asn(check, value, "bots.score.hosting_asns"))
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    Ok(ScoreSettings {
        weights,
        hosting_asns,
        published,
    })
}

/// The browsers' fingerprints `floodgate bots update` wrote into `bots.ranges_dir`, if it did;
/// a file there that does not read is refused at the key.
fn updated_lists(
    check: &Checker<'_>,
    dir: Option<&Spanned<String>>,
) -> Result<Option<Arc<Published>>, ConfigError> {
    let Some(dir) = dir else {
        return Ok(None);
    };
    let path = check.resolve(dir.get_ref()).join(BROWSERS_FILE);
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path)
        .map_err(|e| check.error(dir, format!("`bots.ranges_dir`: {}: {e}", path.display())))?;
    Published::read(&text)
        .map(|lists| Some(Arc::new(lists)))
        .map_err(|e| check.error(dir, format!("`bots.ranges_dir`: {}: {e}", path.display())))
}

mod values;

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use crate::config::tests::BASE;
    use std::path::Path;

    fn read(table: &str) -> Result<crate::bots::ScoreSettings, String> {
        let text = format!("{BASE}\n[bots.score]\n{table}\n");
        parse(&text, Path::new("f.toml"))
            .map(|c| c.bots.score.clone())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn weights_and_hosting_networks_are_read() {
        use crate::identity::Signal;
        let settings =
            read("weights = { headless = 0, spoofed = 100 }\nhosting_asns = [64500, \"AS64501\"]")
                .unwrap();
        assert_eq!(settings.weights.of(Signal::Headless), 0);
        assert_eq!(settings.weights.of(Signal::Spoofed), 100);
        assert_eq!(settings.weights.of(Signal::UaTlsMismatch), 50, "default");
        assert_eq!(settings.hosting_asns, vec![64500, 64501]);
    }

    #[test]
    fn bad_weights_are_refused_where_they_stand() {
        for (table, says) in [
            (
                "weights = { robot = 10 }",
                "f.toml:10:13: `bots.score.weights`: `robot` is not a signal",
            ),
            (
                "weights = { headless = 101 }",
                "f.toml:10:24: `bots.score.weights`: a weight must be from 0 to 100, not 101",
            ),
            (
                "weights = { headless = -1 }",
                "f.toml:10:24: `bots.score.weights`: a weight must be from 0 to 100, not -1",
            ),
            (
                "hosting_asns = [0]",
                "`bots.score.hosting_asns`: `0` is not an AS number",
            ),
            ("threshold = 5", "unknown field"),
        ] {
            let error = read(table).unwrap_err();
            assert!(error.contains(says), "{table}: {error}");
            assert!(error.starts_with("f.toml:"), "located: {error}");
        }
    }
}
