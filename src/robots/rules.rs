//! A parsed robots.txt ([`RobotsTxt`]) and what it says about one request ([`Verdict`]).
//!
//! Lines are read by the `robotstxt` crate, a port of Google's own parser (its key typos,
//! its 16 KiB line limit, `user-agent FooBot` without a colon); groups, rules and matching
//! are this module's, as RFC 9309 says: the groups naming a crawler's product token are
//! merged, and a crawler named by none obeys the `*` groups (or nothing); the longest
//! matching rule wins, `Allow` on a tie; `*` and a final `$` in patterns; rules and paths
//! compared in [§2.2.2's form](super::pattern). Everything is worked out when the file is
//! parsed: a request costs one normalisation of its path and, per group that applies, a
//! scan of its rules (longest first) up to the first that matches.

mod collect;
mod trap;

use super::pattern::{normalise, Pattern};
use super::CrawlDelay;
use collect::{collect, Collected, Group};
use std::collections::HashMap;
use std::sync::Arc;

/// How much of a robots.txt is read (RFC 9309 §2.5: at least 500 KiB); the rest is ignored.
pub const MAX_PARSED: usize = 512 * 1024;

/// How many distinct user-agent tokens a file's groups may name. A file naming more keeps the
/// first ones; a crawler named only past the limit obeys the `*` groups. It bounds the
/// memory of a parsed file and the matcher built from its tokens ([`super::Agents`]).
pub const MAX_TOKENS: usize = 1_000;

/// What a robots.txt says about fetching one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// No rule forbids it (or the longest matching rule is an `Allow`).
    Allowed,
    /// The longest matching rule is a `Disallow`.
    Disallowed,
}

impl Verdict {
    /// The word in metric labels and logs: `allowed` or `disallowed`.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Allowed => "allowed",
            Verdict::Disallowed => "disallowed",
        }
    }
}

/// Whether a rule allows or forbids what it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    // Allow sorts first: it wins a tie.
    Allow,
    Disallow,
}

/// One `Allow` or `Disallow` line.
#[derive(Debug, Clone)]
struct Rule {
    pattern: Pattern,
    kind: Kind,
}

/// A robots.txt as served and as parsed. Never fails: what is not a rule is ignored, and
/// binary garbage has none.
#[derive(Debug, Clone)]
pub struct RobotsTxt {
    /// The body, lossily UTF-8.
    text: Arc<str>,
    /// The part of `text` parsed: after a byte order mark, up to [`MAX_PARSED`].
    parsed: std::ops::Range<usize>,
    /// The file's groups, in order.
    groups: Vec<Group>,
    /// Each token a group names (lowercase) → the groups naming it, merged.
    named: HashMap<Box<str>, Box<[usize]>>,
    /// The tokens in the order the file first names them.
    tokens: Vec<Box<str>>,
    /// The `*` groups.
    any: Box<[usize]>,
}

impl Default for RobotsTxt {
    fn default() -> Self {
        RobotsTxt::parse(b"")
    }
}

impl RobotsTxt {
    /// The robots.txt `body`: its first [`MAX_PARSED`] bytes are read.
    pub fn parse(body: &[u8]) -> RobotsTxt {
        let text: Arc<str> = String::from_utf8_lossy(body).into();
        let parsed = parsed_range(body, &text);
        let Collected {
            groups,
            named,
            tokens,
            any,
        } = collect(&text[parsed.clone()]);
        RobotsTxt {
            text,
            parsed,
            groups,
            named,
            tokens,
            any,
        }
    }

    /// The body as served, lossily UTF-8.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The user-agent tokens its groups name, lowercase, in the order the file names them
    /// first (at most [`MAX_TOKENS`]).
    pub fn tokens(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.tokens.iter().map(|t| &**t)
    }

    /// Whether the crawler whose group token is `token` (`None`: one named by no group) may
    /// fetch `path_and_query` (the request target's path and query, as sent or normalised).
    /// `/robots.txt` itself is always allowed (RFC 9309 §2.2.2).
    pub fn verdict(&self, token: Option<&str>, path_and_query: &str) -> Verdict {
        self.obeyed(token).verdict(path_and_query)
    }

    /// The `Crawl-delay` of the crawler whose group token is `token` (`None`: the `*`
    /// groups'): the first its groups give, in file order.
    pub fn crawl_delay(&self, token: Option<&str>) -> Option<CrawlDelay> {
        self.obeyed(token).crawl_delay()
    }

    /// The groups the crawler whose group token is `token` obeys: those naming it, else the
    /// `*` ones.
    pub fn obeyed(&self, token: Option<&str>) -> Obeyed<'_> {
        let Some(token) = token else {
            return self.obeying(&self.any);
        };
        let found = match token.bytes().any(|b| b.is_ascii_uppercase()) {
            true => self.named.get(&*token.to_ascii_lowercase()),
            false => self.named.get(token),
        };
        self.obeying(found.map_or(&self.any, |groups| groups))
    }

    /// `groups` (numbers of this file's groups, as [`Obeyed::groups`] gave them) obeyed.
    pub fn obeying<'t>(&'t self, groups: &'t [usize]) -> Obeyed<'t> {
        Obeyed { txt: self, groups }
    }
}

/// The groups of a robots.txt one crawler obeys, found once for all a request asks of them.
#[derive(Debug, Clone, Copy)]
pub struct Obeyed<'t> {
    txt: &'t RobotsTxt,
    groups: &'t [usize],
}

impl Obeyed<'_> {
    /// The groups' numbers (to be kept and obeyed again: [`RobotsTxt::obeying`]).
    pub fn groups(&self) -> &[usize] {
        self.groups
    }

    /// Whether the groups let the crawler fetch `path_and_query` (see
    /// [`RobotsTxt::verdict`]).
    pub fn verdict(&self, path_and_query: &str) -> Verdict {
        let path = match path_and_query {
            "" => "/",
            path => path,
        };
        let path = normalise(path);
        if path.split('?').next() == Some("/robots.txt") {
            return Verdict::Allowed;
        }
        let mut best: Option<(usize, Kind)> = None;
        for &g in self.groups {
            let Some(rule) = self.txt.groups[g]
                .rules
                .iter()
                .find(|r| r.pattern.matches(&path))
            else {
                continue;
            };
            let found = (rule.pattern.priority(), rule.kind);
            if best.is_none_or(|b| beats(found, b)) {
                best = Some(found);
            }
        }
        match best {
            Some((_, Kind::Disallow)) => Verdict::Disallowed,
            _ => Verdict::Allowed,
        }
    }

    /// The groups' `Crawl-delay`: the first they give, in file order.
    pub fn crawl_delay(&self) -> Option<CrawlDelay> {
        self.groups.iter().find_map(|&g| self.txt.groups[g].delay)
    }
}

/// Whether a match of `(priority, kind)` beats another: longer wins; on a tie, `Allow`.
fn beats(found: (usize, Kind), other: (usize, Kind)) -> bool {
    found.0 > other.0 || (found.0 == other.0 && found.1 < other.1)
}

/// The range of `text` (`body`, lossily UTF-8) that is parsed: after a byte order mark (whole
/// or cut short, as Google's parser skips it), up to [`MAX_PARSED`] bytes of `body`.
fn parsed_range(body: &[u8], text: &str) -> std::ops::Range<usize> {
    let start = match body {
        [0xEF, 0xBB, 0xBF, ..] => 3,
        // A cut-short mark is one replacement character in the text.
        [0xEF, ..] if text.starts_with('\u{FFFD}') => '\u{FFFD}'.len_utf8(),
        _ => 0,
    };
    let mut end = match body.get(..MAX_PARSED) {
        Some(head) if head.len() < body.len() => String::from_utf8_lossy(head).len(),
        _ => text.len(),
    };
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    start..end.max(start)
}

#[cfg(test)]
mod google;
#[cfg(test)]
mod tests;
