//! Headers Floodgate sets on the way to the backend to tell it what it learnt
//! (`upstream.score_header`, `upstream.signals_header`): any name but one HTTP defines for
//! itself, which the backend would read as the client's or the connection's own.

use super::check::Checker;
use super::error::ConfigError;
use crate::proxy::ScoreHeaders;
use toml::Spanned;

/// The header names HTTP (RFC 9110, 9111, 9112, 6265, 7239) and the forwarding conventions
/// give a meaning of their own.
const HTTP_OWN: [&str; 43] = [
    "accept",
    "accept-charset",
    "accept-encoding",
    "accept-language",
    "accept-ranges",
    "age",
    "allow",
    "authorization",
    "cache-control",
    "connection",
    "content-encoding",
    "content-language",
    "content-length",
    "content-location",
    "content-range",
    "content-type",
    "cookie",
    "date",
    "etag",
    "expect",
    "expires",
    "forwarded",
    "from",
    "host",
    "if-match",
    "if-modified-since",
    "if-none-match",
    "if-range",
    "if-unmodified-since",
    "keep-alive",
    "last-modified",
    "location",
    "max-forwards",
    "proxy-authorization",
    "range",
    "referer",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "user-agent",
    "via",
    "x-forwarded-for",
];

/// A header name Floodgate may set for the backend (`key` named in errors).
pub(crate) fn told_header(
    check: &Checker<'_>,
    value: &Spanned<String>,
    key: &str,
) -> Result<http::HeaderName, ConfigError> {
    let name = check.header_name(value, key)?;
    match HTTP_OWN.contains(&name.as_str()) {
        true => Err(check.error(
            value,
            format!(
                "`{key}`: `{name}` is a header HTTP defines for itself; name one of your own \
                 (like `x-bot-score`)"
            ),
        )),
        false => Ok(name),
    }
}

/// `upstream.score_header` and `upstream.signals_header`.
pub(crate) fn score_headers(
    check: &Checker<'_>,
    score: Option<&Spanned<String>>,
    signals: Option<&Spanned<String>>,
) -> Result<ScoreHeaders, ConfigError> {
    let read = |value: Option<&Spanned<String>>, key| {
        value.map(|v| told_header(check, v, key)).transpose()
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
                "`upstream.score_header`: `host` is a header HTTP",
            ),
            (
                "signals_header = \"via\"",
                "`upstream.signals_header`: `via` is a header HTTP",
            ),
            ("score_header = \"a b\"", "must be a header name"),
        ] {
            let error = read(keys).unwrap_err();
            assert!(error.contains(says), "{keys}: {error}");
            assert!(error.starts_with("f.toml:"), "located: {error}");
        }
    }
}
