//! `upstream.score_header` and `upstream.signals_header`: headers Floodgate sets on the way to
//! the backend, each any name but one of another use (`Checker::backend_header`).

use super::check::Checker;
use super::error::ConfigError;
use crate::proxy::ScoreHeaders;
use toml::Spanned;

/// `upstream.score_header` and `upstream.signals_header`.
pub(crate) fn score_headers(
    check: &Checker<'_>,
    score: Option<&Spanned<String>>,
    signals: Option<&Spanned<String>>,
) -> Result<ScoreHeaders, ConfigError> {
    let read = |value: Option<&Spanned<String>>, key| {
        value.map(|v| check.backend_header(v, key)).transpose()
    };
    Ok(ScoreHeaders {
        score: read(score, "upstream.score_header")?,
        signals: read(signals, "upstream.signals_header")?,
    })
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use crate::config::tests::BASE;
    use std::path::Path;

    fn read(keys: &str) -> Result<crate::proxy::ScoreHeaders, String> {
        let text = BASE.replace("[upstream]\n", &format!("[upstream]\n{keys}\n"));
        assert_ne!(text, BASE, "BASE has an [upstream] table");
        parse(&text, Path::new("f.toml"))
            .map(|c| c.upstream.score_headers.clone())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn score_headers_are_read_and_http_s_own_names_refused_where_they_stand() {
        let headers =
            read("score_header = \"X-Bot-Score\"\nsignals_header = \"x-bot-signals\"").unwrap();
        assert_eq!(headers.score.unwrap().as_str(), "x-bot-score");
        assert_eq!(headers.signals.unwrap().as_str(), "x-bot-signals");
        for (keys, says) in [
            (
                "score_header = \"Host\"",
                "`upstream.score_header`: `Host` has another use",
            ),
            (
                "signals_header = \"via\"",
                "`upstream.signals_header`: `via` has another use",
            ),
            ("score_header = \"a b\"", "must be a header name"),
        ] {
            let error = read(keys).unwrap_err();
            assert!(error.contains(says), "{keys}: {error}");
            assert!(error.starts_with("f.toml:"), "located: {error}");
        }
    }
}
