//! What `[robots]` sets: where the robots.txt comes from, the groups of a managed one, and
//! the trap.

use super::CrawlDelay;
use crate::identity::Category;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// How often the backend's robots.txt is read again, unless `robots.refresh` says.
pub const DEFAULT_REFRESH: Duration = Duration::from_secs(3600);
/// The shortest `robots.refresh`.
pub const MIN_REFRESH: Duration = Duration::from_secs(1);
/// How long a trapped caller is banned, unless `robots.trap_ban` says.
pub const DEFAULT_TRAP_BAN: Duration = Duration::from_secs(3600);
/// How long after fetching `/robots.txt` a request for the trap bans, unless
/// `robots.trap_window` says.
pub const DEFAULT_TRAP_WINDOW: Duration = Duration::from_secs(24 * 3600);

/// Where the served robots.txt comes from (`robots.source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Source {
    /// The backend's `/robots.txt`, read in the background every `refresh`.
    #[default]
    Backend,
    /// The file Floodgate writes from `groups`.
    Managed,
}

impl Source {
    /// The word in the config file: `backend` or `managed`.
    pub fn word(self) -> &'static str {
        match self {
            Source::Backend => "backend",
            Source::Managed => "managed",
        }
    }
}

/// The checked `[robots]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RobotsSettings {
    /// Where the robots.txt comes from.
    pub source: Source,
    /// How often the backend's file is read again (at least [`MIN_REFRESH`]).
    pub refresh: Duration,
    /// The groups of the managed file, in config order (empty for `backend`).
    pub groups: Vec<Group>,
    /// The Content Signals line written in every group of the managed file
    /// (`search=yes, ai-train=no`, contentsignals.org).
    pub content_signal: Option<String>,
    /// The trap's path; `None`: a random path the fleet keeps.
    pub trap: Option<String>,
    /// How long a trapped caller is banned.
    pub trap_ban: Duration,
    /// How long after fetching `/robots.txt` a request for the trap bans.
    pub trap_window: Duration,
}

impl Default for RobotsSettings {
    /// `[robots]` with nothing in it: the backend's file, the defaults.
    fn default() -> Self {
        RobotsSettings {
            source: Source::Backend,
            refresh: DEFAULT_REFRESH,
            groups: Vec::new(),
            content_signal: None,
            trap: None,
            trap_ban: DEFAULT_TRAP_BAN,
            trap_window: DEFAULT_TRAP_WINDOW,
        }
    }
}

/// One group of the managed file: who it names and what it tells them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The crawlers it names.
    pub agent: GroupAgent,
    /// Paths (patterns) they must not fetch.
    pub disallow: Vec<String>,
    /// Paths (patterns) they may fetch all the same.
    pub allow: Vec<String>,
    /// The seconds between their requests.
    pub crawl_delay: Option<CrawlDelay>,
}

/// Whom a group names: the key of `robots.groups`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupAgent {
    /// One user-agent token (`GPTBot`).
    Token(String),
    /// Every catalogue crawler of a category (and the tokens only robots.txt knows,
    /// [`super::ROBOTS_ONLY`]).
    Category(Category),
    /// `*`: every crawler no other group names.
    Any,
}

/// A key of `robots.groups` that is neither a category, `*`, nor a product token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a bot category ({categories}), `*` or a user-agent token (letters, `-` and `_`)",
    categories = category_words()
)]
pub struct UnknownAgent(pub String);

fn category_words() -> String {
    let words: Vec<&str> = Category::ALL.iter().map(|c| c.word()).collect();
    words.join(", ")
}

impl FromStr for GroupAgent {
    type Err = UnknownAgent;

    /// A category word (`ai-crawler`), `*`, or a product token (`GPTBot`), in that order.
    fn from_str(key: &str) -> Result<Self, Self::Err> {
        if key == "*" {
            return Ok(GroupAgent::Any);
        }
        if let Ok(category) = key.parse::<Category>() {
            return Ok(GroupAgent::Category(category));
        }
        match is_product_token(key) {
            true => Ok(GroupAgent::Token(key.to_owned())),
            false => Err(UnknownAgent(key.to_owned())),
        }
    }
}

impl fmt::Display for GroupAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GroupAgent::Token(token) => f.write_str(token),
            GroupAgent::Category(category) => f.write_str(category.word()),
            GroupAgent::Any => f.write_str("*"),
        }
    }
}

/// Whether `value` is a product token a robots.txt group can name (RFC 9309 §2.2.1:
/// `[A-Za-z_-]+`).
pub fn is_product_token(value: &str) -> bool {
    !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphabetic() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::{is_product_token, GroupAgent};
    use crate::identity::Category;

    #[test]
    fn a_key_is_a_category_then_star_then_a_token() {
        let agent = |key: &str| key.parse::<GroupAgent>();
        assert_eq!(
            agent("ai-crawler"),
            Ok(GroupAgent::Category(Category::AiCrawler))
        );
        assert_eq!(
            agent("search-engine"),
            Ok(GroupAgent::Category(Category::SearchEngine))
        );
        assert_eq!(agent("*"), Ok(GroupAgent::Any));
        assert_eq!(agent("GPTBot"), Ok(GroupAgent::Token("GPTBot".into())));
        assert_eq!(
            agent("Google-Extended"),
            Ok(GroupAgent::Token("Google-Extended".into()))
        );
        for bad in ["ai crawler", "bot2", "", "*bot", "Googlebot/2.1"] {
            let e = agent(bad).unwrap_err().to_string();
            assert!(
                e.contains("is not a bot category (search-engine, ai-crawler"),
                "{e}"
            );
        }
        assert!(is_product_token("Foo_Bar-baz"));
        assert!(!is_product_token("ツ"));
    }
}
