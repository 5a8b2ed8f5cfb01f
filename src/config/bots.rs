//! `[bots]` → the crawlers known (the shipped catalogue with `[[bots.crawler]]` added or
//! replacing entries), each one's published ranges read now, and how reverse DNS is asked.

use super::check::Checker;
use super::error::ConfigError;
use super::signed::SignedFile;
use crate::bots::{
    BotsSettings, Catalogue, Crawler, CrawlerError, Crawlers, DnsSettings, Ranges, DNS_TIMEOUT,
};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use toml::Spanned;

pub(crate) use lines::BotsLines;
use values::{CategoryName, DnsWait, Resolver};

/// `[bots]`: the crawler catalogue's additions and how claims are verified.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BotsFile {
    pub(crate) dns_timeout: Option<DnsWait>,
    pub(crate) resolver: Option<Resolver>,
    pub(crate) ranges_dir: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) crawler: Vec<CrawlerFile>,
    pub(crate) signed: Option<SignedFile>,
    pub(crate) score: Option<super::score::ScoreFile>,
}

/// `[[bots.crawler]]`: a crawler added to the catalogue, or replacing one of the same name.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CrawlerFile {
    pub(crate) name: Spanned<String>,
    pub(crate) operator: Option<Spanned<String>>,
    pub(crate) category: Spanned<CategoryName>,
    pub(crate) user_agent: Spanned<String>,
    pub(crate) ranges_file: Option<Spanned<String>>,
    pub(crate) ranges_url: Option<String>,
    pub(crate) rdns: Option<Spanned<Vec<String>>>,
}

/// The checked `[bots]` table (the defaults when it is absent).
pub(crate) fn bots(check: &Checker<'_>, file: &BotsFile) -> Result<BotsSettings, ConfigError> {
    let entries = file
        .crawler
        .iter()
        .map(|entry| crawler(check, entry))
        .collect::<Result<Vec<_>, _>>()?;
    let catalogue = Catalogue::builtin().with_entries(entries);
    let ranges = ranges(check, file, &catalogue)?;
    Ok(BotsSettings {
        crawlers: Arc::new(Crawlers { catalogue, ranges }),
        dns: DnsSettings {
            timeout: file.dns_timeout.as_ref().map_or(DNS_TIMEOUT, |wait| wait.0),
            resolver: file.resolver.as_ref().map(|resolver| resolver.0),
        },
        signed: super::signed::signed(check, file.signed.as_ref())?,
        score: super::score::score(check, file.score.as_ref(), file.ranges_dir.as_ref())?,
    })
}

/// One `[[bots.crawler]]`.
fn crawler(check: &Checker<'_>, entry: &CrawlerFile) -> Result<Crawler, ConfigError> {
    let ranges_file = match &entry.ranges_file {
        Some(path) => Some(PathBuf::from(
            check.readable(path, "bots.crawler.ranges_file")?,
        )),
        None => None,
    };
    let mut crawler = Crawler::new(
        entry.name.get_ref(),
        entry.operator.as_ref().map(|o| o.get_ref().as_str()),
        entry.category.get_ref().0,
        entry.user_agent.get_ref(),
        ranges_file,
        entry.rdns.as_ref().map_or(&[][..], |r| r.get_ref()),
    )
    .map_err(|e| {
        let message = format!("`bots.crawler` `{}`: {e}", entry.name.get_ref());
        let at = field_of(entry, &e);
        ConfigError::at(check.path, check.text, Some(at), message)
    })?;
    crawler.ranges_url = entry.ranges_url.clone();
    Ok(crawler)
}

/// Where in `entry` the key `error` is about stands (a bad `rdns` suffix at the list: toml
/// locates no element of a list).
fn field_of(entry: &CrawlerFile, error: &CrawlerError) -> std::ops::Range<usize> {
    match error {
        CrawlerError::Spoofed => entry.category.span(),
        CrawlerError::EmptyOperator => entry.operator.as_ref().unwrap_or(&entry.name).span(),
        CrawlerError::BadRegex(_) | CrawlerError::MatchesEverything(_) => entry.user_agent.span(),
        CrawlerError::BadSuffix(_) => entry.rdns.as_ref().map_or(entry.name.span(), Spanned::span),
        CrawlerError::BadName(_) => entry.name.span(),
    }
}

/// The ranges of each crawler of `catalogue`: its `ranges_file`, else the file
/// `floodgate bots update` wrote for it in `bots.ranges_dir`, if there is one.
fn ranges(
    check: &Checker<'_>,
    file: &BotsFile,
    catalogue: &Catalogue,
) -> Result<Vec<Option<Arc<Ranges>>>, ConfigError> {
    let dir = file.ranges_dir.as_ref();
    let ranges = catalogue
        .crawlers()
        .iter()
        .map(|crawler| {
            if let Some(path) = &crawler.ranges_file {
                let at = located_ranges_file(file, crawler.name.as_ref());
                return load(check, path, at, "bots.crawler.ranges_file").map(Some);
            }
            let Some(dir) = dir else {
                return Ok(None);
            };
            let path = check
                .resolve(dir.get_ref())
                .join(crawler.ranges_file_name());
            match path.exists() {
                true => load(check, &path, Some(dir), "bots.ranges_dir").map(Some),
                false => Ok(None),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(dir) = dir {
        warn_if_nothing_read(check, dir, catalogue, &ranges);
    }
    Ok(ranges)
}

/// Warns, located, when `bots.ranges_dir` (`dir`) gave no crawler its ranges: it does not
/// exist, or holds none of the files `floodgate bots update` writes. Every claim of a crawler
/// checked by its ranges alone then stays unverified, which nothing else would say.
fn warn_if_nothing_read(
    check: &Checker<'_>,
    dir: &Spanned<String>,
    catalogue: &Catalogue,
    ranges: &[Option<Arc<Ranges>>],
) {
    let path = check.resolve(dir.get_ref());
    let from_dir = catalogue
        .crawlers()
        .iter()
        .zip(ranges)
        .any(|(crawler, ranges)| crawler.ranges_file.is_none() && ranges.is_some());
    if from_dir {
        return;
    }
    let what = match path.is_dir() {
        true => "holds no crawler's ranges",
        false => "is not a directory",
    };
    let message = format!(
        "`bots.ranges_dir`: `{}` {what}: no crawler is verified by its published ranges \
         (GPTBot and most AI crawlers have nothing else); run `floodgate bots update {}`",
        path.display(),
        path.display()
    );
    log::warn!("{}", check.error(dir, message));
}

/// Where `[[bots.crawler]]` named `name` gives its `ranges_file`.
fn located_ranges_file<'f>(file: &'f BotsFile, name: &str) -> Option<&'f Spanned<String>> {
    file.crawler
        .iter()
        .find(|c| c.name.get_ref().eq_ignore_ascii_case(name))
        .and_then(|c| c.ranges_file.as_ref())
}

/// The ranges in `path`, an error at `at` (the key that named the file) when unreadable.
fn load(
    check: &Checker<'_>,
    path: &Path,
    at: Option<&Spanned<String>>,
    key: &str,
) -> Result<Arc<Ranges>, ConfigError> {
    Ranges::load(path).map(Arc::new).map_err(|e| {
        let message = format!("`{key}`: {e}");
        match at {
            Some(at) => check.error(at, message),
            None => ConfigError::at(check.path, check.text, None, message),
        }
    })
}

mod lines;
mod values;

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use crate::config::tests::BASE;
    use std::path::Path;

    fn error_of(bots: &str) -> String {
        let text = format!("{BASE}\n{bots}\n");
        parse(&text, Path::new("f.toml")).unwrap_err().to_string()
    }

    #[test]
    fn bad_bots_tables_are_refused_where_they_stand() {
        let entry = |keys: &str| format!("[[bots.crawler]]\nname = \"X\"\n{keys}");
        for (bots, at, says) in [
            (
                entry("category = \"crawler\"\nuser_agent = \"X/\""),
                "f.toml:11:12: `bots.crawler.category`: `crawler` is not a bot category",
                "not a bot category",
            ),
            (
                entry("category = \"spoofed\"\nuser_agent = \"X/\""),
                "f.toml:11:",
                "cannot be `spoofed`",
            ),
            (
                entry("category = \"monitor\"\nuser_agent = \"(\""),
                "f.toml:12:",
                "not a valid regex",
            ),
            (
                entry("category = \"monitor\"\nuser_agent = \".*\""),
                "f.toml:12:",
                "matches every",
            ),
            (
                entry("category = \"monitor\"\nuser_agent = \"X/\"\nrdns = [\"a..b\"]"),
                "f.toml:13:8: `bots.crawler` `X`: `rdns` suffix `a..b`",
                "not a domain name",
            ),
            (
                "[bots]\ndns_timeout = \"0s\"".to_owned(),
                "f.toml:10:",
                "from 1ms to 5s",
            ),
            (
                "[bots]\nresolver = \"dns.example\"".to_owned(),
                "f.toml:10:",
                "DNS server's address",
            ),
        ] {
            let error = error_of(&bots);
            assert!(
                error.starts_with(at) && error.contains(says),
                "{bots}: {error}"
            );
        }
    }

    #[test]
    fn the_defaults_ask_the_system_within_200ms_and_know_the_shipped_catalogue() {
        let config = parse(BASE, Path::new("f.toml")).unwrap();
        assert_eq!(config.bots.dns, crate::bots::DnsSettings::default());
        assert!(config.bots.crawlers.catalogue.len() > 100);
        assert_eq!(config.bots.crawlers.with_ranges(), 0);
        let with_resolver = format!("{BASE}\n[bots]\nresolver = \"127.0.0.1\"\n");
        let config = parse(&with_resolver, Path::new("f.toml")).unwrap();
        assert_eq!(
            config.bots.dns.resolver,
            Some("127.0.0.1:53".parse().unwrap())
        );
    }
}
