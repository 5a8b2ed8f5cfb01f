//! `robots.groups`: a key naming a category, `*` or a user-agent token, each with its rules
//! and crawl delay.

use super::super::check::Checker;
use super::super::error::ConfigError;
use crate::bots::Catalogue;
use crate::identity::Category;
use crate::robots::managed::category_tokens;
use crate::robots::{CrawlDelay, Group, GroupAgent, ROBOTS_ONLY};
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// One group as written: `{ disallow = [...], allow = [...], crawl_delay = "2s" }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GroupFile {
    #[serde(default)]
    pub(super) disallow: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) allow: Vec<Spanned<String>>,
    crawl_delay: Option<Spanned<String>>,
}

/// The groups of `table`, in the order written.
pub(super) fn groups(
    check: &Checker<'_>,
    table: &Spanned<BTreeMap<String, Spanned<GroupFile>>>,
    catalogue: &Catalogue,
) -> Result<Vec<Group>, ConfigError> {
    let mut entries: Vec<_> = table.get_ref().iter().collect();
    entries.sort_by_key(|(_, entry)| entry.span().start);
    entries
        .into_iter()
        .map(|(name, entry)| group(check, name, entry, catalogue))
        .collect()
}

/// The key naming group `name` in messages: `robots.groups."ai-crawler"`.
pub(super) fn key_of(name: &str) -> String {
    format!("robots.groups.\"{name}\"")
}

fn group(
    check: &Checker<'_>,
    name: &str,
    entry: &Spanned<GroupFile>,
    catalogue: &Catalogue,
) -> Result<Group, ConfigError> {
    let key = key_of(name);
    let agent: GroupAgent = name
        .parse()
        .map_err(|e| check.error(entry, format!("`{key}`: {e}")))?;
    match &agent {
        GroupAgent::Category(Category::Spoofed) => {
            let message = format!(
                "`{key}`: `spoofed` is what a crawler's failed claim becomes, not a category \
                 robots.txt can name"
            );
            return Err(check.error(entry, message));
        }
        GroupAgent::Category(category) if category_tokens(*category, catalogue).is_empty() => {
            let message = format!(
                "`{key}`: no crawler of the catalogue is of category `{category}`: the group \
                 names no one"
            );
            log::warn!("{}", check.error(entry, message));
        }
        GroupAgent::Token(token) if !known(token, catalogue) => {
            let message = format!(
                "`{key}`: no crawler of the catalogue is named `{token}` and it is no category; \
                 it is written as a User-agent token"
            );
            log::warn!("{}", check.error(entry, message));
        }
        _ => {}
    }
    let file = entry.get_ref();
    let crawl_delay = match &file.crawl_delay {
        Some(value) => Some(crawl_delay(check, value, &key)?),
        None => None,
    };
    if let (GroupAgent::Any, Some(value)) = (&agent, &file.crawl_delay) {
        let message = format!(
            "`{key}.crawl_delay`: Google ignores Crawl-delay; a verified search engine is held \
             to it only by a group naming it"
        );
        log::warn!("{}", check.error(value, message));
    }
    Ok(Group {
        agent,
        disallow: paths(check, &file.disallow, &format!("{key}.disallow"))?,
        allow: paths(check, &file.allow, &format!("{key}.allow"))?,
        crawl_delay,
    })
}

/// Whether `token` names a crawler of the catalogue or a token only robots.txt knows.
fn known(token: &str, catalogue: &Catalogue) -> bool {
    let robots_only = ROBOTS_ONLY.iter().flat_map(|(_, tokens)| tokens.iter());
    catalogue
        .crawlers()
        .iter()
        .map(|c| &*c.name)
        .chain(robots_only.copied())
        .any(|name| name.eq_ignore_ascii_case(token))
}

/// A rule's paths: each starts with `/` and fits on one line of the file.
fn paths(
    check: &Checker<'_>,
    paths: &[Spanned<String>],
    key: &str,
) -> Result<Vec<String>, ConfigError> {
    paths
        .iter()
        .map(|path| {
            let text = path.get_ref();
            let message = match () {
                _ if !text.starts_with('/') => format!("`{key}`: `{text}` does not start with `/`"),
                _ if text.contains(|c: char| c.is_whitespace() || c.is_control() || c == '#') => {
                    format!("`{key}`: `{text}` holds a space, a control character or `#`")
                }
                _ => return Ok(text.clone()),
            };
            Err(check.error(path, message))
        })
        .collect()
}

/// `crawl_delay`: a whole number of seconds from 1s to a day (`"2s"`, `"1m"`).
fn crawl_delay(
    check: &Checker<'_>,
    value: &Spanned<String>,
    key: &str,
) -> Result<CrawlDelay, ConfigError> {
    let delay = humantime::parse_duration(value.get_ref())
        .ok()
        .filter(|d| d.subsec_nanos() == 0)
        .and_then(|d| CrawlDelay::from_secs(d.as_secs()));
    delay.ok_or_else(|| {
        let message = format!(
            "`{key}.crawl_delay` must be a whole number of seconds from 1s to 1d (like \"2s\"), \
             not `{}`",
            value.get_ref()
        );
        check.error(value, message)
    })
}
