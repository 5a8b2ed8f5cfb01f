//! Where a solved challenge sends the browser back: the original path and query, and only
//! ever a path on this site (never an open redirect).
//!
//! A browser resolves a `Location` against the current URL after stripping tabs and newlines
//! and reading `\` as `/`, so `//evil`, `/\evil` and `/\t/evil` all leave the site. A target
//! is safe when it starts with one `/` and holds only printable ASCII other than `\`:
//! percent-encoded text (`/%2F%2Fevil`) stays a path, as the browser does not decode it.

use http::Uri;
use thiserror::Error;

/// The longest return target, in bytes.
pub const MAX_TARGET_LEN: usize = 2048;

/// Why a return target is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum BadTarget {
    /// It is longer than [`MAX_TARGET_LEN`].
    #[error("the return target is longer than {MAX_TARGET_LEN} bytes")]
    TooLong,
    /// It does not start with `/` (empty, relative, or with a scheme like `https:`).
    #[error("the return target is not a path on this site: it must start with `/`")]
    NotAPath,
    /// It starts with `//` or `/\`, which a browser reads as another host.
    #[error("the return target names another host (it starts with `//` or `/\\`)")]
    OtherHost,
    /// It holds a `\`, which a browser reads as `/`.
    #[error("the return target holds a backslash")]
    Backslash,
    /// It holds a control character, a space or a byte outside ASCII.
    #[error("the return target holds a control character, a space or a non-ASCII byte")]
    Unprintable,
}

/// The `to` parameter of a solution (already percent-decoded) when it is a safe path and
/// query on this site.
pub fn return_target(decoded: &str) -> Result<&str, BadTarget> {
    let bytes = decoded.as_bytes();
    if bytes.len() > MAX_TARGET_LEN {
        return Err(BadTarget::TooLong);
    }
    if bytes.first() != Some(&b'/') {
        return Err(BadTarget::NotAPath);
    }
    if matches!(bytes.get(1), Some(b'/' | b'\\')) {
        return Err(BadTarget::OtherHost);
    }
    if let Some(&byte) = bytes.iter().find(|b| !b.is_ascii_graphic() || **b == b'\\') {
        return Err(match byte {
            b'\\' => BadTarget::Backslash,
            _ => BadTarget::Unprintable,
        });
    }
    Ok(decoded)
}

/// The target a challenge page sends the browser back to: the request's path and query, or
/// `/` when they are no safe target (e.g. a request for `//evil.example/`).
pub fn original_target(uri: &Uri) -> &str {
    let path_and_query = uri.path_and_query().map_or("/", |pq| pq.as_str());
    return_target(path_and_query).unwrap_or("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_queries_on_this_site_are_kept() {
        for good in [
            "/",
            "/a/b?x=1&y=2",
            "/search?q=%2F%2Fevil.com",
            "/%2F%2Fevil.com",
            "/%5Cevil.com",
            "/..//evil.com",
            "/a//b",
            "/path;p?q#frag",
            "/~user/caf%C3%A9",
        ] {
            assert_eq!(return_target(good), Ok(good));
        }
    }

    #[test]
    fn the_classic_open_redirect_payloads_are_refused() {
        use BadTarget::*;
        let cases = [
            ("//evil.com", OtherHost),
            ("///evil.com", OtherHost),
            ("/\\evil.com", OtherHost),
            ("\\\\evil", NotAPath),
            ("\\/evil.com", NotAPath),
            ("https://evil", NotAPath),
            ("http:/evil", NotAPath),
            ("javascript:alert(1)", NotAPath),
            ("java\tscript:alert(1)", NotAPath),
            ("evil.com", NotAPath),
            ("", NotAPath),
            (" /a", NotAPath),
            ("/a\\b", Backslash),
            ("/\t/evil.com", Unprintable),
            ("/%09/evil.com\t", Unprintable),
            ("/\r\nLocation: https://evil", Unprintable),
            ("/a\nb", Unprintable),
            ("/a b", Unprintable),
            ("/a\u{7f}", Unprintable),
            ("/\u{0}", Unprintable),
            ("/caf\u{e9}", Unprintable),
            ("/\u{ff0f}evil.com", Unprintable),
        ];
        for (bad, why) in cases {
            assert_eq!(return_target(bad), Err(why), "{bad:?}");
        }
    }

    #[test]
    fn a_target_has_a_length_limit() {
        let long = format!("/{}", "a".repeat(MAX_TARGET_LEN - 1));
        assert!(return_target(&long).is_ok());
        assert_eq!(return_target(&format!("{long}a")), Err(BadTarget::TooLong));
    }

    #[test]
    fn the_original_target_is_the_path_and_query_or_the_root() {
        let target = |uri: &str| original_target(&uri.parse().unwrap()).to_owned();
        assert_eq!(target("/a/b?x=1&y=2"), "/a/b?x=1&y=2");
        assert_eq!(target("https://site.example/a?b"), "/a?b");
        assert_eq!(target("https://site.example"), "/");
        assert_eq!(target("//evil.com/x"), "/");
        assert_eq!(target("*"), "/");
    }
}
