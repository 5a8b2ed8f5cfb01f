//! Which requests a challenge page can reach: page loads only. A feed reader, an API call or
//! a form post cannot show a page, so it gets the policy's ordinary answer instead.

use http::{HeaderMap, Method};
use thiserror::Error;

use super::accept::accepts_a_page;
use crate::identity::Reach;

/// The paths never shown a challenge page unless the config says otherwise.
pub const DEFAULT_NEVER_PATHS: &[&str] = &[
    "/.well-known/*",
    "/robots.txt",
    "*.xml",
    "*.rss",
    "*.atom",
    "*/feed",
    "*/feed/",
    "/favicon.ico",
];

/// Why a never-challenged path pattern is refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PatternError {
    /// It is empty.
    #[error("a path pattern is empty")]
    Empty,
    /// It starts with neither `/` nor `*`.
    #[error("the path pattern `{0}` starts with neither `/` nor `*`")]
    NotAPath(String),
    /// It has a `*` inside (only the start and the end may be `*`).
    #[error("the path pattern `{0}` has a `*` that is neither at its start nor at its end")]
    InnerStar(String),
}

/// A path pattern: text, with `*` (any text) at its start, its end, or both.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern {
    Exact(String),
    Prefix(String),
    Suffix(String),
    Contains(String),
}

impl Pattern {
    fn parse(text: &str) -> Result<Self, PatternError> {
        if text.is_empty() {
            return Err(PatternError::Empty);
        }
        if !text.starts_with(['/', '*']) {
            return Err(PatternError::NotAPath(text.to_owned()));
        }
        let (head, rest) = match text.strip_prefix('*') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (tail, core) = match rest.strip_suffix('*') {
            Some(core) => (true, core),
            None => (false, rest),
        };
        if core.contains('*') {
            return Err(PatternError::InnerStar(text.to_owned()));
        }
        let core = core.to_owned();
        Ok(match (head, tail) {
            (false, false) => Self::Exact(core),
            (false, true) => Self::Prefix(core),
            (true, false) => Self::Suffix(core),
            (true, true) => Self::Contains(core),
        })
    }

    fn matches(&self, path: &str) -> bool {
        match self {
            Self::Exact(text) => path == text,
            Self::Prefix(text) => path.starts_with(text.as_str()),
            Self::Suffix(text) => path.ends_with(text.as_str()),
            Self::Contains(text) => path.contains(text.as_str()),
        }
    }
}

/// Which requests can be shown a challenge page: GET or HEAD, on a path no never-pattern
/// matches, accepting HTML.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRules {
    never: Vec<Pattern>,
}

impl PageRules {
    /// Rules that never challenge a path `never_paths` matches (`*` only at a pattern's start,
    /// its end, or both; a pattern starts with `/` or `*`).
    pub fn new(never_paths: &[String]) -> Result<Self, PatternError> {
        let never = never_paths.iter().map(|p| Pattern::parse(p));
        Ok(Self {
            never: never.collect::<Result<_, _>>()?,
        })
    }

    /// Whether a request for `path` (without its query) can be shown a challenge page.
    pub fn reach(&self, method: &Method, path: &str, headers: &HeaderMap) -> Reach {
        let page_method = method == Method::GET || method == Method::HEAD;
        let page = page_method
            && !self.never.iter().any(|pattern| pattern.matches(path))
            && accepts_a_page(headers);
        if page {
            Reach::Page
        } else {
            Reach::NotAPage
        }
    }
}

impl Default for PageRules {
    /// The rules with [`DEFAULT_NEVER_PATHS`].
    fn default() -> Self {
        let never = DEFAULT_NEVER_PATHS.iter().map(|p| Pattern::parse(p));
        Self {
            never: never.collect::<Result<_, _>>().expect("the defaults parse"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn page(rules: &PageRules, method: Method, path: &str, accept: Option<&str>) -> bool {
        let mut headers = HeaderMap::new();
        if let Some(accept) = accept {
            headers.insert(http::header::ACCEPT, HeaderValue::from_str(accept).unwrap());
        }
        rules.reach(&method, path, &headers) == Reach::Page
    }

    const FIREFOX: Option<&str> = Some("text/html,application/xhtml+xml,*/*;q=0.8");

    #[test]
    fn only_get_and_head_page_loads_are_reached() {
        let rules = PageRules::default();
        assert!(page(&rules, Method::GET, "/", FIREFOX));
        assert!(page(&rules, Method::HEAD, "/a/b", FIREFOX));
        assert!(page(&rules, Method::GET, "/a", Some("*/*")), "curl");
        for method in [Method::POST, Method::PUT, Method::DELETE, Method::OPTIONS] {
            assert!(!page(&rules, method, "/", FIREFOX));
        }
        assert!(!page(&rules, Method::GET, "/api", Some("application/json")));
    }

    #[test]
    fn the_default_never_paths_are_never_reached() {
        let rules = PageRules::default();
        for path in [
            "/.well-known/acme-challenge/x",
            "/robots.txt",
            "/sitemap.xml",
            "/blog/index.rss",
            "/atom.atom",
            "/feed",
            "/blog/feed",
            "/blog/feed/",
            "/favicon.ico",
        ] {
            assert!(!page(&rules, Method::GET, path, FIREFOX), "{path}");
        }
        for path in [
            "/feeding",
            "/robots.txt.html",
            "/.well-known",
            "/xml",
            "/blog/feed/x",
        ] {
            assert!(page(&rules, Method::GET, path, FIREFOX), "{path}");
        }
    }

    #[test]
    fn patterns_take_a_star_at_either_end() {
        let rules = PageRules::new(&["/api/*".into(), "*/raw".into(), "*/embed/*".into()]);
        let rules = rules.unwrap();
        assert!(!page(&rules, Method::GET, "/api/x", FIREFOX));
        assert!(!page(&rules, Method::GET, "/a/raw", FIREFOX));
        assert!(!page(&rules, Method::GET, "/x/embed/y", FIREFOX));
        assert!(
            page(&rules, Method::GET, "/robots.txt", FIREFOX),
            "no defaults when given"
        );
        assert!(PageRules::new(&[]).unwrap().never.is_empty());
    }

    #[test]
    fn bad_patterns_are_refused_with_their_reason() {
        let new = |p: &str| PageRules::new(&[p.to_owned()]);
        assert_eq!(new(""), Err(PatternError::Empty));
        assert_eq!(new("feed"), Err(PatternError::NotAPath("feed".into())));
        assert_eq!(new("/a/*/b"), Err(PatternError::InnerStar("/a/*/b".into())));
        assert_eq!(new("/**"), Err(PatternError::InnerStar("/**".into())));
        assert!(new("*").is_ok() && new("**").is_ok());
    }
}
