//! The groups of a robots.txt, gathered from the lines Google's parser (the `robotstxt`
//! crate) reports: a group is a run of `User-agent` lines and the rules after it, up to the
//! next `User-agent` line that follows a rule or another record (RFC 9309 §2.1; Google's
//! reading: a `Sitemap` or an unknown record ends the run of agents too). Rules before the
//! first group belong to none and are ignored.

use super::{Kind, Rule, MAX_TOKENS};
use crate::robots::pattern::Pattern;
use crate::robots::CrawlDelay;
use robotstxt::RobotsParseHandler;
use std::collections::HashMap;

/// One group of the file.
#[derive(Debug, Clone, Default)]
pub(super) struct Group {
    /// Its rules, longest first, `Allow` first among rules of one length: the first that
    /// matches a path is the group's answer.
    pub(super) rules: Vec<Rule>,
    /// Its first `Crawl-delay`.
    pub(super) delay: Option<CrawlDelay>,
    /// The line (from 1) of its last `User-agent` line: a rule added to the group is written
    /// after it.
    pub(super) agents_end: usize,
}

impl Group {
    /// Adds `rule` where it sorts.
    pub(super) fn add(&mut self, rule: Rule) {
        let key = |r: &Rule| (std::cmp::Reverse(r.pattern.priority()), r.kind);
        let at = self.rules.partition_point(|r| key(r) <= key(&rule));
        self.rules.insert(at, rule);
    }
}

/// What the lines of a file make.
#[derive(Debug, Default)]
pub(super) struct Collected {
    pub(super) groups: Vec<Group>,
    pub(super) named: HashMap<Box<str>, Box<[usize]>>,
    pub(super) tokens: Vec<Box<str>>,
    pub(super) any: Box<[usize]>,
}

/// The groups of robots.txt `text`.
pub(super) fn collect(text: &str) -> Collected {
    let mut collector = Collector::default();
    robotstxt::parse_robotstxt(text, &mut collector);
    let mut named = HashMap::with_capacity(collector.tokens.len());
    for (token, groups) in collector.tokens.iter().zip(collector.named_groups) {
        named.insert(token.clone(), groups.into_boxed_slice());
    }
    for group in &mut collector.groups {
        let key = |r: &Rule| (std::cmp::Reverse(r.pattern.priority()), r.kind);
        group.rules.sort_by_key(key);
    }
    Collected {
        groups: collector.groups,
        named,
        tokens: collector.tokens,
        any: collector.any.into_boxed_slice(),
    }
}

/// The parser's callbacks, building the groups.
#[derive(Debug, Default)]
struct Collector {
    groups: Vec<Group>,
    /// The tokens named, in order, and for each the groups naming it.
    tokens: Vec<Box<str>>,
    named_groups: Vec<Vec<usize>>,
    index: HashMap<Box<str>, usize>,
    any: Vec<usize>,
    /// Whether the last line was a `User-agent` line: another one joins its group.
    in_agents: bool,
}

impl Collector {
    /// The group the current line belongs to, if any.
    fn current(&mut self) -> Option<&mut Group> {
        self.groups.last_mut()
    }

    fn name(&mut self, token: &str, group: usize) {
        let token = token.to_ascii_lowercase();
        let slot = match self.index.get(token.as_str()) {
            Some(&slot) => slot,
            None if self.tokens.len() < MAX_TOKENS => {
                let token: Box<str> = token.into();
                self.index.insert(token.clone(), self.tokens.len());
                self.tokens.push(token);
                self.named_groups.push(Vec::new());
                self.tokens.len() - 1
            }
            None => return,
        };
        let groups = &mut self.named_groups[slot];
        if groups.last() != Some(&group) {
            groups.push(group);
        }
    }

    fn rule(&mut self, value: &str, kind: Kind) {
        self.in_agents = false;
        let Some(group) = self.current() else {
            return;
        };
        if let Some(pattern) = Pattern::new(value) {
            group.rules.push(Rule { pattern, kind });
        }
        // Google: an allowed `…/index.html` (or `.htm`) allows its directory, `…/`, too.
        let index_page = value
            .rfind('/')
            .filter(|&slash| value[slash..].starts_with("/index.htm"));
        if let (Kind::Allow, Some(slash)) = (kind, index_page) {
            let directory = format!("{}$", &value[..=slash]);
            if let Some(pattern) = Pattern::new(&directory) {
                group.rules.push(Rule { pattern, kind });
            }
        }
    }
}

/// Whether a `User-agent` value names every crawler: `*`, alone or followed by a space
/// (Google reads `* foo` as `*`).
fn names_everyone(value: &str) -> bool {
    value
        .strip_prefix('*')
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace))
}

/// The product token a `User-agent` value names: its leading `[A-Za-z_-]` characters
/// (`Googlebot/2.1` → `Googlebot`, `Foo Bar` → `Foo`), RFC 9309 §2.2.1 as Google reads it.
pub(crate) fn product_token(value: &str) -> &str {
    let end = value
        .find(|c: char| !(c.is_ascii_alphabetic() || c == '-' || c == '_'))
        .unwrap_or(value.len());
    &value[..end]
}

impl RobotsParseHandler for Collector {
    fn handle_robots_start(&mut self) {}

    fn handle_robots_end(&mut self) {}

    fn handle_user_agent(&mut self, line_num: u32, user_agent: &str) {
        if !self.in_agents {
            self.groups.push(Group::default());
            self.in_agents = true;
        }
        let group = self.groups.len() - 1;
        self.groups[group].agents_end = line_num as usize;
        if names_everyone(user_agent) {
            if self.any.last() != Some(&group) {
                self.any.push(group);
            }
        } else {
            let token = product_token(user_agent);
            if !token.is_empty() {
                self.name(token, group);
            }
        }
    }

    fn handle_allow(&mut self, _line_num: u32, value: &str) {
        self.rule(value, Kind::Allow);
    }

    fn handle_disallow(&mut self, _line_num: u32, value: &str) {
        self.rule(value, Kind::Disallow);
    }

    fn handle_sitemap(&mut self, _line_num: u32, _value: &str) {
        self.in_agents = false;
    }

    fn handle_unknown_action(&mut self, _line_num: u32, action: &str, value: &str) {
        self.in_agents = false;
        if !action.eq_ignore_ascii_case("crawl-delay") {
            return;
        }
        if let Some(group) = self.current().filter(|g| g.delay.is_none()) {
            group.delay = CrawlDelay::parse(value);
        }
    }
}
