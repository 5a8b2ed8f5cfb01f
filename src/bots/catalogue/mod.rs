//! The crawler catalogue: which crawler a User-Agent claims to be. The shipped list
//! (`catalogue.toml`, dated, with its sources) names each known crawler by operator and
//! category; config entries replace same-named ones or come first. The first entry whose
//! pattern matches wins, found with one pass of a [`RegexSet`] over the whole list.

mod crawler;
mod file;

pub use crawler::{Crawler, CrawlerError};
pub use file::CatalogueError;

use regex::{RegexSet, RegexSetBuilder};
use std::path::Path;

/// The shipped catalogue's text.
const BUILTIN: &str = include_str!("../catalogue.toml");

/// How large the compiled set of every pattern may grow; a few hundred names take far less.
const SET_SIZE_LIMIT: usize = 256 << 20;

/// Known crawlers in the order they are tried, and one matcher over all their patterns.
#[derive(Debug, Clone)]
pub struct Catalogue {
    updated: String,
    sources: Vec<String>,
    crawlers: Vec<Crawler>,
    matcher: Matcher,
}

/// How a User-Agent is matched against every pattern at once.
#[derive(Debug, Clone)]
enum Matcher {
    /// One pass over the User-Agent for all patterns.
    Set(RegexSet),
    /// Each pattern in turn: only if the set could not be built within its size limit.
    EachInTurn,
}

impl Catalogue {
    /// The catalogue shipped with Floodgate.
    pub fn builtin() -> Catalogue {
        let parsed = file::parse(Path::new("src/bots/catalogue.toml"), BUILTIN)
            .expect("the shipped catalogue is valid (a unit test reads it)");
        Self::from_parts(parsed.updated, parsed.sources, parsed.crawlers)
    }

    /// A catalogue file in the shipped file's format, which replaces the shipped list
    /// (`floodgate bots update --catalogue FILE`).
    pub fn load(path: &Path) -> Result<Catalogue, CatalogueError> {
        let parsed = file::read(path)?;
        Ok(Self::from_parts(
            parsed.updated,
            parsed.sources,
            parsed.crawlers,
        ))
    }

    /// This catalogue with config entries: each replaces the entry of the same name (ignoring
    /// case) in place, or, if new, comes first (tried before every built-in one), in the
    /// order given.
    pub fn with_entries(self, entries: Vec<Crawler>) -> Catalogue {
        let mut added: Vec<Crawler> = Vec::new();
        let mut known = self.crawlers;
        for entry in entries {
            let same = |c: &Crawler| c.name.eq_ignore_ascii_case(&entry.name);
            if let Some(slot) = added.iter_mut().chain(known.iter_mut()).find(|c| same(c)) {
                *slot = entry;
            } else {
                added.push(entry);
            }
        }
        added.append(&mut known);
        Self::from_parts(self.updated, self.sources, added)
    }

    fn from_parts(updated: String, sources: Vec<String>, crawlers: Vec<Crawler>) -> Catalogue {
        let matcher = RegexSetBuilder::new(crawlers.iter().map(|c| c.user_agent.as_str()))
            .size_limit(SET_SIZE_LIMIT)
            .dfa_size_limit(SET_SIZE_LIMIT)
            .build()
            .map_or(Matcher::EachInTurn, Matcher::Set);
        Catalogue {
            updated,
            sources,
            crawlers,
            matcher,
        }
    }

    /// The date the shipped list was last checked against its sources (`2026-11-27`).
    pub fn updated(&self) -> &str {
        &self.updated
    }

    /// Where the list's facts come from.
    pub fn sources(&self) -> &[String] {
        &self.sources
    }

    /// How many crawlers it knows.
    pub fn len(&self) -> usize {
        self.crawlers.len()
    }

    /// Whether it knows none.
    pub fn is_empty(&self) -> bool {
        self.crawlers.is_empty()
    }

    /// The crawlers in the order they are tried.
    pub fn crawlers(&self) -> &[Crawler] {
        &self.crawlers
    }

    /// The crawler a User-Agent claims: the first in order whose pattern matches, with its
    /// index; `None` for none. A User-Agent matching nothing costs one pass and no allocation.
    pub fn classify(&self, user_agent: &str) -> Option<(usize, &Crawler)> {
        let index = match &self.matcher {
            Matcher::Set(set) => {
                // `is_match` stops at the first match and allocates nothing; most requests
                // are browsers and end here. `matches` then names the lowest matching index.
                if !set.is_match(user_agent) {
                    return None;
                }
                set.matches(user_agent).iter().next()?
            }
            Matcher::EachInTurn => self
                .crawlers
                .iter()
                .position(|c| c.user_agent.is_match(user_agent))?,
        };
        self.crawlers.get(index).map(|c| (index, c))
    }
}

#[cfg(test)]
mod tests;
