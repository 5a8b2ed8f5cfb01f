//! One known crawler: its name, operator and category, the User-Agent pattern that names it,
//! and what it publishes to check a claim (a ranges file, reverse-DNS suffixes).

use crate::identity::Category;
use regex::Regex;
use std::path::PathBuf;
use std::sync::Arc;

/// A crawler the catalogue (or the config's `[[bots.crawler]]`) knows.
#[derive(Debug, Clone)]
pub struct Crawler {
    /// Its name (`Googlebot`), unique in a catalogue ignoring case.
    pub name: Arc<str>,
    /// Who runs it (`Google`): the identity source `bot` buckets by this.
    pub operator: Arc<str>,
    /// What kind of bot it is (never `spoofed`).
    pub category: Category,
    /// The pattern a User-Agent claiming this crawler matches, anywhere in it.
    pub user_agent: Regex,
    /// Where the crawler publishes its address ranges (`floodgate bots update` fetches it).
    pub ranges_url: Option<String>,
    /// A ranges file given in config (`ranges_file`), read instead of `bots.ranges_dir`'s.
    pub ranges_file: Option<PathBuf>,
    /// Reverse-DNS suffixes of its addresses' names: lower case, no leading dot.
    pub rdns: Vec<Arc<str>>,
}

/// A crawler entry that cannot be used; the message names the bad field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CrawlerError {
    /// The name is empty or has no letter or digit to name a ranges file by.
    #[error("`name` must have a letter or digit in it, not `{0}`")]
    BadName(String),
    /// The operator is given but empty.
    #[error("`operator` must not be empty")]
    EmptyOperator,
    /// `spoofed` is what a failed claim becomes, not a crawler's category.
    #[error("`category` cannot be `spoofed`: that is what a crawler's failed claim becomes")]
    Spoofed,
    /// The User-Agent pattern is not a regex (or is too large).
    #[error("`user_agent` is not a valid regex: {0}")]
    BadRegex(String),
    /// The User-Agent pattern matches every User-Agent, even an empty one.
    #[error("`user_agent` `{0}` matches every User-Agent, even an empty one")]
    MatchesEverything(String),
    /// A reverse-DNS suffix is not a domain name.
    #[error("`rdns` suffix `{0}` is not a domain name (like \"googlebot.com\")")]
    BadSuffix(String),
}

/// The most compiled size one pattern may take; patterns are a name or a few alternatives.
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

impl Crawler {
    /// An entry as config gives it; errors name the bad field (bad regex, bad suffix). The
    /// operator defaults to the name.
    pub fn new(
        name: &str,
        operator: Option<&str>,
        category: Category,
        user_agent: &str,
        ranges_file: Option<PathBuf>,
        rdns: &[String],
    ) -> Result<Crawler, CrawlerError> {
        if !name.chars().any(|c| c.is_ascii_alphanumeric()) {
            return Err(CrawlerError::BadName(name.to_owned()));
        }
        let operator = match operator.map(str::trim) {
            Some("") => return Err(CrawlerError::EmptyOperator),
            Some(operator) => operator,
            None => name,
        };
        if category == Category::Spoofed {
            return Err(CrawlerError::Spoofed);
        }
        let rdns = rdns
            .iter()
            .map(|suffix| dns_suffix(suffix))
            .collect::<Result<_, _>>()?;
        Ok(Crawler {
            name: name.into(),
            operator: operator.into(),
            category,
            user_agent: pattern(user_agent)?,
            ranges_url: None,
            ranges_file,
            rdns,
        })
    }

    /// Whether the crawler publishes a way to check a claim of it (ranges, or reverse-DNS
    /// suffixes): then only a verified claim is the operator's.
    pub fn checkable(&self) -> bool {
        self.ranges_url.is_some() || self.ranges_file.is_some() || !self.rdns.is_empty()
    }

    /// The file `floodgate bots update` writes this entry's ranges to, and the profiler reads
    /// from `bots.ranges_dir`: `<name lower-cased, non-alphanumerics as '-'>.json`.
    pub fn ranges_file_name(&self) -> String {
        file_stem(&self.name) + ".json"
    }
}

/// The name as a file name's stem: ASCII letters and digits lower-cased, the rest `-`.
pub(super) fn file_stem(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

fn pattern(text: &str) -> Result<Regex, CrawlerError> {
    let regex = regex::RegexBuilder::new(text)
        .size_limit(PATTERN_SIZE_LIMIT)
        .build()
        .map_err(|e| CrawlerError::BadRegex(e.to_string()))?;
    // A pattern matching the empty string claims every request for one crawler.
    if regex.is_match("") {
        return Err(CrawlerError::MatchesEverything(text.to_owned()));
    }
    Ok(regex)
}

/// A domain suffix, lower-cased, without a leading dot: letters, digits and hyphens in
/// non-empty labels.
fn dns_suffix(text: &str) -> Result<Arc<str>, CrawlerError> {
    let suffix = text.trim().trim_start_matches('.').to_ascii_lowercase();
    let label_ok = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    if suffix.len() > 253 || !suffix.split('.').all(label_ok) {
        return Err(CrawlerError::BadSuffix(text.to_owned()));
    }
    Ok(suffix.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crawler(name: &str, user_agent: &str, rdns: &[&str]) -> Result<Crawler, CrawlerError> {
        let rdns: Vec<String> = rdns.iter().map(|s| s.to_string()).collect();
        Crawler::new(name, None, Category::AiCrawler, user_agent, None, &rdns)
    }

    #[test]
    fn suffixes_are_lower_cased_without_their_leading_dot() {
        let c = crawler(
            "Example",
            "ExampleBot",
            &[".Crawl.Example.COM", "example.net"],
        )
        .unwrap();
        let rdns: Vec<&str> = c.rdns.iter().map(|s| &**s).collect();
        assert_eq!(rdns, ["crawl.example.com", "example.net"]);
        assert_eq!(&*c.operator, "Example", "the operator defaults to the name");
    }

    #[test]
    fn bad_fields_are_named() {
        let bad_regex = crawler("X", "Bot(", &[]).unwrap_err();
        assert!(
            bad_regex.to_string().starts_with("`user_agent`"),
            "{bad_regex}"
        );
        for bad in ["", ".", "a..b", "exa mple.com", "-x.com", "x_y.com"] {
            let e = crawler("X", "XBot", &[bad]).unwrap_err();
            assert_eq!(e, CrawlerError::BadSuffix(bad.to_owned()));
        }
        assert!(matches!(
            crawler("X", "a*", &[]),
            Err(CrawlerError::MatchesEverything(_))
        ));
        assert!(matches!(
            crawler("--", "XBot", &[]),
            Err(CrawlerError::BadName(_))
        ));
        let spoofed = Crawler::new("X", None, Category::Spoofed, "XBot", None, &[]);
        assert_eq!(spoofed.unwrap_err(), CrawlerError::Spoofed);
        let empty_operator = Crawler::new("X", Some(" "), Category::Monitor, "XBot", None, &[]);
        assert_eq!(empty_operator.unwrap_err(), CrawlerError::EmptyOperator);
    }

    #[test]
    fn ranges_file_names_are_lower_case_and_punctuation_free() {
        let file = |name| crawler(name, "x", &[]).unwrap().ranges_file_name();
        assert_eq!(file("Googlebot"), "googlebot.json");
        assert_eq!(file("ChatGPT-User"), "chatgpt-user.json");
        assert_eq!(file("Yahoo! Slurp"), "yahoo--slurp.json");
        assert_eq!(file("../../etc/passwd"), "------etc-passwd.json");
    }
}
