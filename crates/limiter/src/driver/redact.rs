//! Redis connection strings made safe to print: every place redis-rs reads a credential from is
//! replaced by `***`.
//!
//! redis-rs (`IntoConnectionInfo for url::Url`) takes the password of `redis://`, `rediss://`,
//! `valkey://` and `valkeys://` URLs from the userinfo (`user:pass@`), and that of
//! `redis+unix://`, `valkey+unix://` and `unix://` URLs from the `pass` (and the user from
//! `user`) query parameter. Rather than list secret names, the rule keeps only what is known to
//! be harmless:
//! - everything between `scheme:` (or `scheme://`) and the last `@` becomes `***`. A password
//!   may hold `/`, `?` or `#` unencoded, so the last `@` is taken wherever it is; when the
//!   hidden part holds `?` or `#`, what follows may be the tail of a query value or fragment,
//!   so all of it is hidden;
//! - the value of every query parameter but `db` and `protocol` becomes `***` (a parameter
//!   without `=` becomes `***` whole), so `?pass=`, `?password=` and any misspelling are hidden;
//! - a fragment other than `#insecure` becomes `***`;
//! - text that does not start with a URL scheme is not a URL this can read: all of it is `***`.

/// Query parameters whose values are shown; every other value is hidden.
const SHOWN_PARAMETERS: [&str; 2] = ["db", "protocol"];

/// `url` with its credentials, and anything that might be one, replaced by `***`.
pub(crate) fn redact_url(url: &str) -> String {
    if url.is_empty() {
        return String::new();
    }
    let Some((scheme, rest)) = split_scheme(url) else {
        return "***".to_owned();
    };
    let (slashes, rest) = match rest.strip_prefix("//") {
        Some(rest) => ("//", rest),
        None => ("", rest),
    };
    let (userinfo, rest) = match rest.rsplit_once('@') {
        Some((userinfo, _)) if userinfo.contains(['?', '#']) => {
            return format!("{scheme}:{slashes}***");
        }
        Some((_, rest)) => ("***@", rest),
        None => ("", rest),
    };
    format!(
        "{scheme}:{slashes}{userinfo}{}",
        redact_query_and_fragment(rest)
    )
}

/// The scheme (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`) and what follows `:`.
fn split_scheme(url: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = url.split_once(':')?;
    let mut chars = scheme.chars();
    let starts_with_letter = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    let scheme_chars = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    (starts_with_letter && scheme_chars).then_some((scheme, rest))
}

/// `host/path?query#fragment` with the query and fragment redacted.
fn redact_query_and_fragment(rest: &str) -> String {
    let (rest, fragment) = match rest.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (rest, None),
    };
    let mut out = match rest.split_once('?') {
        Some((path, query)) => format!("{path}?{}", redact_query(query)),
        None => rest.to_owned(),
    };
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(if fragment == "insecure" {
            fragment
        } else {
            "***"
        });
    }
    out
}

/// `a=1&pass=x` with every value but those of [`SHOWN_PARAMETERS`] as `***`.
fn redact_query(query: &str) -> String {
    query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if SHOWN_PARAMETERS.contains(&name) => pair.to_owned(),
            Some((name, _)) => format!("{name}=***"),
            None if pair.is_empty() => String::new(),
            None => "***".to_owned(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_in_connection_strings_are_hidden() {
        let cases = [
            (
                "redis+unix:///tmp/r.sock?pass=SECRET",
                "redis+unix:///tmp/r.sock?pass=***",
            ),
            (
                "unix:///x.sock?password=SECRET",
                "unix:///x.sock?password=***",
            ),
            ("redis://:SECRET@h", "redis://***@h"),
            ("rediss://u:SECRET@h:1/0", "rediss://***@h:1/0"),
            ("redis://h?password=SECRET", "redis://h?password=***"),
            (
                "unix:///x.sock?user=me&pass=SECRET&db=2&protocol=resp3",
                "unix:///x.sock?user=***&pass=***&db=2&protocol=resp3",
            ),
            (
                "valkey+unix:///x.sock?p%61ss=SECRET",
                "valkey+unix:///x.sock?p%61ss=***",
            ),
            ("unix:/x.sock?pass=SECRET", "unix:/x.sock?pass=***"),
            ("rediss://u:SECRET@h#insecure", "rediss://***@h#insecure"),
            ("redis://h#SECRET", "redis://h#***"),
            ("redis://h?SECRET", "redis://h?***"),
            ("redis://h?a=1&&pass=SECRET", "redis://h?a=***&&pass=***"),
        ];
        for (url, printed) in cases {
            assert_eq!(redact_url(url), printed, "{url}");
        }
    }

    #[test]
    fn a_password_holding_at_slash_question_or_hash_is_hidden_whole() {
        let cases = [
            ("redis://u:p@ss@h:6379", "redis://***@h:6379"),
            ("redis://u:S%2FX@h", "redis://***@h"),
            ("redis://u:123/SECRET@h", "redis://***@h"),
            ("redis://:SE?CRET@h", "redis://***"),
            ("redis://:SE#CRET@h", "redis://***"),
            ("redis:u:SECRET@h", "redis:***@h"),
            ("redis://h/0?password=SE@CRET/x", "redis://***"),
            ("unix:///a@b.sock?pass=SECRET", "unix://***@b.sock?pass=***"),
        ];
        for (url, printed) in cases {
            assert_eq!(redact_url(url), printed, "{url}");
        }
    }

    #[test]
    fn urls_without_secrets_print_as_given() {
        for url in [
            "redis://127.0.0.1:6379",
            "rediss://cache.internal:6380/2",
            "redis+unix:///run/redis.sock?db=1",
            "redis://[::1]:6379",
            "",
        ] {
            assert_eq!(redact_url(url), url);
        }
    }

    #[test]
    fn text_that_is_no_url_is_hidden_whole() {
        for text in ["SECRET", "1:SECRET@h", " redis://:SECRET@h", "://SECRET"] {
            assert_eq!(redact_url(text), "***", "{text}");
        }
    }
}
