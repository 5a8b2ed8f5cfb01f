//! The catalogue's file format (`src/bots/catalogue.toml`, or an operator's own list given to
//! `floodgate bots update --catalogue FILE`): a date, its sources, and `[[crawler]]` entries in
//! the order they are tried. Errors say `file:line:column: message`.

use super::crawler::{file_stem, Crawler, CrawlerError};
use crate::identity::Category;
use crate::location::line_and_column;
use serde::Deserialize;
use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// A catalogue file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogueFile {
    updated: String,
    #[serde(default)]
    sources: Vec<String>,
    #[serde(default)]
    crawler: Vec<Entry>,
}

/// One `[[crawler]]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: Spanned<String>,
    operator: Option<String>,
    category: Spanned<String>,
    user_agent: Spanned<String>,
    ranges_url: Option<Spanned<String>>,
    rdns: Option<Spanned<Vec<String>>>,
    /// Where the entry's facts come from (required in the shipped file, by a unit test).
    #[allow(dead_code)]
    source: Option<String>,
}

/// What a catalogue file holds once checked.
#[derive(Debug)]
pub(super) struct Parsed {
    pub(super) updated: String,
    pub(super) sources: Vec<String>,
    pub(super) crawlers: Vec<Crawler>,
}

/// A catalogue file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CatalogueError {
    /// The file could not be read.
    #[error("{path}: {error}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The file says something wrong, at a place.
    #[error("{path}:{line}:{column}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based.
        line: usize,
        /// 1-based, in characters.
        column: usize,
        /// What is wrong.
        message: String,
    },
}

/// Reads and checks a catalogue file.
pub(super) fn read(path: &Path) -> Result<Parsed, CatalogueError> {
    let text = std::fs::read_to_string(path).map_err(|error| CatalogueError::Unreadable {
        path: path.to_owned(),
        error,
    })?;
    parse(path, &text)
}

/// Checks a catalogue's text; `path` names it in errors.
pub(super) fn parse(path: &Path, text: &str) -> Result<Parsed, CatalogueError> {
    let at = |span: Option<Range<usize>>, message: String| {
        let (line, column) = line_and_column(text, span.map_or(0, |s| s.start));
        CatalogueError::Invalid {
            path: path.to_owned(),
            line,
            column,
            message,
        }
    };
    let file: CatalogueFile =
        toml::from_str(text).map_err(|e| at(e.span(), e.message().to_owned()))?;
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut crawlers = Vec::with_capacity(file.crawler.len());
    for entry in file.crawler {
        let name = entry.name.get_ref();
        if let Some(first) = seen.insert(file_stem(name), name.clone()) {
            let message = format!(
                "crawler `{name}` is named like `{first}` before it (names are compared ignoring case and punctuation)"
            );
            return Err(at(Some(entry.name.span()), message));
        }
        crawlers.push(crawler(entry).map_err(|(span, message)| at(Some(span), message))?);
    }
    Ok(Parsed {
        updated: file.updated,
        sources: file.sources,
        crawlers,
    })
}

/// One entry as a [`Crawler`], or the span and text of what is wrong with it.
fn crawler(entry: Entry) -> Result<Crawler, (Range<usize>, String)> {
    let category: Category = entry
        .category
        .get_ref()
        .parse()
        .map_err(|e: crate::identity::UnknownCategory| (entry.category.span(), e.to_string()))?;
    let mut crawler = Crawler::new(
        entry.name.get_ref(),
        entry.operator.as_deref(),
        category,
        entry.user_agent.get_ref(),
        None,
        entry.rdns.as_ref().map_or(&[][..], |r| r.get_ref()),
    )
    .map_err(|e| {
        let span = match e {
            CrawlerError::BadName(_) | CrawlerError::EmptyOperator => entry.name.span(),
            CrawlerError::Spoofed => entry.category.span(),
            CrawlerError::BadRegex(_) | CrawlerError::MatchesEverything(_) => {
                entry.user_agent.span()
            }
            CrawlerError::BadSuffix(_) => {
                entry.rdns.as_ref().map_or(entry.name.span(), |r| r.span())
            }
        };
        (span, e.to_string())
    })?;
    if let Some(url) = entry.ranges_url {
        if !(url.get_ref().starts_with("https://") || url.get_ref().starts_with("http://")) {
            let message = format!(
                "`ranges_url` must be an http(s) URL, not `{}`",
                url.get_ref()
            );
            return Err((url.span(), message));
        }
        crawler.ranges_url = Some(url.into_inner());
    }
    Ok(crawler)
}

/// The shipped file's `[[crawler]]` sources, for its own test.
#[cfg(test)]
pub(super) fn sources_of(text: &str) -> Vec<(String, Option<String>)> {
    let file: CatalogueFile = toml::from_str(text).expect("the catalogue parses");
    file.crawler
        .into_iter()
        .map(|e| (e.name.into_inner(), e.source))
        .collect()
}
