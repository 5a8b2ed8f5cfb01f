//! The managed robots.txt (`source = "managed"`): the file Floodgate writes from
//! `[robots] groups`.
//!
//! A group keyed by a category names every catalogue crawler of it (by its name, when that
//! is a product token) and the tokens that only robots.txt knows ([`ROBOTS_ONLY`]). A token
//! named by several groups gets all their rules (RFC 9309 merges the groups naming one
//! crawler; writing them as one group makes first-group readers agree) and the longest of
//! their delays; tokens told the same are written as one group. Each group's rules are
//! written longest first, `Allow` before `Disallow` of the same length, so a reader taking
//! the first matching rule (Python's `urllib.robotparser`, many others) agrees with RFC
//! 9309's longest match. A `User-agent: *` group is always written, last; a group with no
//! rule says `Disallow:` (everything allowed). `content_signal` adds a `Content-Signal:` line
//! (contentsignals.org) to every group, and the trap is disallowed in every group.

use super::pattern::Pattern;
use super::settings::is_product_token;
use super::{CrawlDelay, GroupAgent, RobotsSettings, RobotsTxt};
use crate::bots::Catalogue;
use crate::identity::Category;
use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;

/// Tokens that appear only in robots.txt, written for their category: no request carries
/// them (`Google-Extended` governs whether Googlebot's fetches train Gemini;
/// `Applebot-Extended` whether Applebot's train Apple's models), so they cannot be enforced
/// per request, only stated.
pub const ROBOTS_ONLY: [(Category, &[&str]); 1] = [(
    Category::AiCrawler,
    &["Google-Extended", "Applebot-Extended"],
)];

/// The tokens a category expands to: each catalogue crawler of it whose name is a product
/// token, then its [`ROBOTS_ONLY`] tokens; no token twice (ignoring case).
pub fn category_tokens(category: Category, catalogue: &Catalogue) -> Vec<String> {
    let named = catalogue
        .crawlers()
        .iter()
        .filter(|c| c.category == category)
        .map(|c| &*c.name);
    let extra = ROBOTS_ONLY
        .iter()
        .filter(|(c, _)| *c == category)
        .flat_map(|(_, tokens)| tokens.iter().copied());
    let mut seen = BTreeSet::new();
    named
        .chain(extra)
        .filter(|t| is_product_token(t) && seen.insert(t.to_ascii_lowercase()))
        .map(str::to_owned)
        .collect()
}

/// The managed file, parsed (as crawlers read it).
pub fn managed_file(
    settings: &RobotsSettings,
    catalogue: &Catalogue,
    trap: Option<&str>,
) -> RobotsTxt {
    RobotsTxt::parse(managed_text(settings, catalogue, trap).as_bytes())
}

/// The managed file's text, with `trap` (the configured one or the fleet's) disallowed in
/// every group.
pub fn managed_text(
    settings: &RobotsSettings,
    catalogue: &Catalogue,
    trap: Option<&str>,
) -> String {
    let (named, mut any) = entries(settings, catalogue);
    let mut groups: Vec<(Vec<String>, Entry)> = Vec::new();
    for (token, mut entry) in named {
        entry.trap(trap);
        match groups.iter_mut().find(|(_, e)| *e == entry) {
            Some((tokens, _)) => tokens.push(token),
            None => groups.push((vec![token], entry)),
        }
    }
    any.trap(trap);
    groups.push((vec!["*".to_owned()], any));
    let signal = settings.content_signal.as_deref().filter(|s| one_line(s));
    let mut text = String::from("# robots.txt written by Floodgate from [robots] groups\n");
    for (tokens, entry) in &groups {
        text.push('\n');
        for token in tokens {
            let _ = writeln!(text, "User-agent: {token}");
        }
        entry.write(&mut text, signal);
    }
    text
}

/// Whether a rule allows or forbids; `Allow` sorts first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Verb {
    Allow,
    Disallow,
}

/// What one token's group says: its rules in the order written, and its delay.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Entry {
    rules: BTreeSet<(Reverse<usize>, Verb, String)>,
    delay: Option<CrawlDelay>,
}

impl Entry {
    fn add(&mut self, verb: Verb, path: &str) {
        if let Some(pattern) = Pattern::new(path).filter(|_| one_line(path)) {
            self.rules
                .insert((Reverse(pattern.priority()), verb, path.to_owned()));
        }
    }

    fn merge(&mut self, group: &super::Group) {
        for path in &group.disallow {
            self.add(Verb::Disallow, path);
        }
        for path in &group.allow {
            self.add(Verb::Allow, path);
        }
        self.delay = self.delay.max(group.crawl_delay);
    }

    fn trap(&mut self, trap: Option<&str>) {
        if let Some(trap) = trap {
            self.add(Verb::Disallow, trap);
        }
    }

    fn write(&self, text: &mut String, signal: Option<&str>) {
        if let Some(signal) = signal {
            let _ = writeln!(text, "Content-Signal: {signal}");
        }
        if let Some(delay) = self.delay {
            let _ = writeln!(text, "Crawl-delay: {}", delay.secs());
        }
        for (_, verb, path) in &self.rules {
            let verb = match verb {
                Verb::Allow => "Allow",
                Verb::Disallow => "Disallow",
            };
            let _ = writeln!(text, "{verb}: {path}");
        }
        if self.rules.is_empty() {
            text.push_str("Disallow:\n");
        }
    }
}

/// Each token's entry (in the order the groups name them, as first written) and the `*`
/// group's.
fn entries(settings: &RobotsSettings, catalogue: &Catalogue) -> (Vec<(String, Entry)>, Entry) {
    let mut named: Vec<(String, Entry)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut any = Entry::default();
    for group in &settings.groups {
        let tokens = match &group.agent {
            GroupAgent::Any => {
                any.merge(group);
                continue;
            }
            GroupAgent::Token(token) => vec![token.clone()],
            GroupAgent::Category(category) => category_tokens(*category, catalogue),
        };
        for token in tokens {
            let slot = *index.entry(token.to_ascii_lowercase()).or_insert_with(|| {
                named.push((token, Entry::default()));
                named.len() - 1
            });
            named[slot].1.merge(group);
        }
    }
    (named, any)
}

/// Whether `value` fits on one line of the file.
fn one_line(value: &str) -> bool {
    !value.contains(|c: char| c.is_control())
}

#[cfg(test)]
mod tests;
