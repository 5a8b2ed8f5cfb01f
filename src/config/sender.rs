//! A policy's `match.asn`, `match.country`, `match.bot`, `match.verified`, `match.ja4`,
//! `match.h2fp`, `match.min_score`, `match.max_score`, `match.signals` and `match.robots`:
//! conditions on what is known of the sender.

use super::check::Checker;
use super::error::ConfigError;
use super::policy_table::PolicyMatchFile as MatchFile;
use crate::identity::{Category, Country, H2Fp, Ja4, RobotsVerdict, Signal, Signals, MAX_SCORE};
use crate::policy::SenderConditions;
use std::str::FromStr;
use toml::Spanned;

/// The checked sender conditions of a policy's `match` or `unless` (`table`, named in errors).
pub(crate) fn sender(
    check: &Checker<'_>,
    file: &MatchFile,
    table: &str,
) -> Result<SenderConditions, ConfigError> {
    let key = |name: &str| format!("{table}.{name}");
    Ok(SenderConditions {
        asn: match &file.asn {
            Some(list) => non_empty(check, list, &key("asn"))?
                .iter()
                .map(|value| asn(check, value, &key("asn")))
                .collect::<Result<_, _>>()?,
            None => Vec::new(),
        },
        country: words::<Country>(check, file.country.as_ref(), &key("country"))?,
        bot: words::<Category>(check, file.bot.as_ref(), &key("bot"))?,
        verified: file.verified.as_ref().map(|v| *v.get_ref()),
        ja4: words::<Ja4>(check, file.ja4.as_ref(), &key("ja4"))?,
        h2fp: words::<H2Fp>(check, file.h2fp.as_ref(), &key("h2fp"))?,
        min_score: score(check, file.min_score.as_ref(), &key("min_score"))?,
        max_score: score(check, file.max_score.as_ref(), &key("max_score"))?,
        signals: signals(check, file.signals.as_ref(), &key("signals"))?,
        robots: robots(check, file.robots.as_ref(), &key("robots"))?,
    })
}

/// `match.robots`: `"allowed"` or `"disallowed"`.
fn robots(
    check: &Checker<'_>,
    word: Option<&Spanned<String>>,
    key: &str,
) -> Result<Option<RobotsVerdict>, ConfigError> {
    let Some(word) = word else {
        return Ok(None);
    };
    word.get_ref()
        .parse()
        .map(Some)
        .map_err(|e| check.error(word, format!("`{key}`: {e}")))
}

/// `match.signals`: the bot score's signals, any of which holds.
fn signals(
    check: &Checker<'_>,
    list: Option<&Spanned<Vec<Spanned<String>>>>,
    key: &str,
) -> Result<Signals, ConfigError> {
    let named = words::<Signal>(check, list, key)?;
    Ok(named
        .into_iter()
        .fold(Signals::default(), |set, signal| set.with(signal)))
}

/// A score bound: 0 to 100.
fn score(
    check: &Checker<'_>,
    value: Option<&Spanned<i64>>,
    key: &str,
) -> Result<Option<u8>, ConfigError> {
    let Some(value) = value else {
        return Ok(None);
    };
    match u8::try_from(*value.get_ref()) {
        Ok(n) if n <= MAX_SCORE => Ok(Some(n)),
        _ => Err(check.error(
            value,
            format!("`{key}` must be from 0 to 100, not {}", value.get_ref()),
        )),
    }
}

/// `list`, refused where it stands when empty (a condition nothing can meet).
fn non_empty<'l, T>(
    check: &Checker<'_>,
    list: &'l Spanned<Vec<T>>,
    key: &str,
) -> Result<&'l [T], ConfigError> {
    match list.get_ref().is_empty() {
        true => Err(check.error(list, format!("`{key}` needs at least one value"))),
        false => Ok(list.get_ref()),
    }
}

/// The words of `list` read as `T`s, each error where its word stands.
fn words<T>(
    check: &Checker<'_>,
    list: Option<&Spanned<Vec<Spanned<String>>>>,
    key: &str,
) -> Result<Vec<T>, ConfigError>
where
    T: FromStr,
    T::Err: std::fmt::Display,
{
    let Some(list) = list else {
        return Ok(Vec::new());
    };
    non_empty(check, list, key)?
        .iter()
        .map(|word| {
            word.get_ref()
                .parse()
                .map_err(|e| check.error(word, format!("`{key}`: {e}")))
        })
        .collect()
}

/// An autonomous system number: `64500` or `"AS64500"`, from 1 to 4294967295.
pub(super) fn asn(
    check: &Checker<'_>,
    value: &Spanned<toml::Value>,
    key: &str,
) -> Result<u32, ConfigError> {
    let number = match value.get_ref() {
        toml::Value::Integer(n) => u32::try_from(*n).ok(),
        toml::Value::String(text) => text
            .strip_prefix("AS")
            .or_else(|| text.strip_prefix("as"))
            .and_then(|digits| digits.parse().ok()),
        _ => None,
    };
    number.filter(|&n| n > 0).ok_or_else(|| {
        let message = format!(
            "`{key}`: `{}` is not an AS number (1 to 4294967295, or \"AS64500\")",
            value.get_ref()
        );
        check.error(value, message)
    })
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use crate::config::tests::with_policy;
    use crate::identity::Category;
    use std::path::Path;

    fn read(keys: &str) -> Result<crate::policy::SenderConditions, String> {
        let text = with_policy(&format!(
            "name = \"p\"\naction = \"deny\"\nmatch = {{ {keys} }}"
        ));
        parse(&text, Path::new("f.toml"))
            .map(|c| c.policies[0].conditions.sender.clone())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn sender_conditions_are_read() {
        let sender = read(
            r#"asn = [64500, "AS13335"], country = ["nl"], bot = ["spoofed"], verified = false"#,
        )
        .unwrap();
        assert_eq!(sender.asn, vec![64500, 13335]);
        assert_eq!(sender.country, vec!["NL".parse().unwrap()]);
        assert_eq!(sender.bot, vec![Category::Spoofed]);
        assert_eq!(sender.verified, Some(false));
        let chrome = "1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p";
        let sender = read(&format!("h2fp = [\"{chrome}\"]")).unwrap();
        assert_eq!(sender.h2fp, vec![chrome.parse().unwrap()]);
        let scored = read("min_score = 50, max_score = 80").unwrap();
        assert_eq!((scored.min_score, scored.max_score), (Some(50), Some(80)));
        let signals = read(r#"signals = ["ua-tls-mismatch", "headless"]"#).unwrap();
        assert_eq!(signals.signals.to_string(), "ua-tls-mismatch,headless");
    }

    #[test]
    fn bad_sender_conditions_are_refused_where_they_stand() {
        for (keys, says) in [
            ("asn = [0]", "`policy.match.asn`: `0` is not an AS number"),
            (
                "asn = [\"ASX\"]",
                "`policy.match.asn`: `\"ASX\"` is not an AS number",
            ),
            ("asn = []", "`policy.match.asn` needs at least one value"),
            (
                "country = [\"NLD\"]",
                "`policy.match.country`: `NLD` is not a two-letter",
            ),
            (
                "bot = [\"crawler\"]",
                "`policy.match.bot`: `crawler` is not a bot category",
            ),
            ("verified = \"yes\"", "invalid type"),
            (
                "h2fp = [\"1:1|00\"]",
                "`policy.match.h2fp`: `1:1|00` is not an HTTP/2 fingerprint",
            ),
            ("h2fp = []", "`policy.match.h2fp` needs at least one value"),
            (
                "min_score = 101",
                "`policy.match.min_score` must be from 0 to 100, not 101",
            ),
            (
                "max_score = -1",
                "`policy.match.max_score` must be from 0 to 100, not -1",
            ),
            (
                "signals = [\"robot\"]",
                "`policy.match.signals`: `robot` is not a signal",
            ),
            (
                "signals = []",
                "`policy.match.signals` needs at least one value",
            ),
        ] {
            let error = read(keys).unwrap_err();
            assert!(error.contains(says), "{keys}: {error}");
            assert!(error.starts_with("f.toml:"), "located: {error}");
        }
    }
}
