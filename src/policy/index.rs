//! Which of many routes a request is on, without trying each: every route is filed under one
//! condition it requires (its host, else its path prefix, else the literal prefix its
//! anchored regex requires, else its regex; a route with none of these is always a
//! candidate, unless another index files its policy, as the User-Agent index does, and hands it
//! in as a candidate when the request meets that condition), so a request's candidates are the routes filed under its host, under a prefix
//! of its path, under a regex its path matches (one `RegexSet` pass), and those always tried. Each candidate is then checked whole (`Route::matches`), and the matches
//! come back in the routes' order: the same answer as trying every route in turn, which a
//! property test holds it to. Below [`INDEX_FROM`] routes, trying each is cheaper and is what
//! is done.

use super::{Route, RouteFacts};
use regex::RegexSet;
use smallvec::SmallVec;
use std::collections::HashMap;

/// From this many routes on, the index is used.
pub const INDEX_FROM: usize = 16;

/// Route numbers, in order; a few inline.
pub type Matches = SmallVec<[usize; 8]>;

/// Routes filed for lookup.
#[derive(Debug, Default)]
pub struct RouteIndex {
    routes: Vec<Route>,
    filed: Option<Filed>,
}

#[derive(Debug, Default)]
struct Filed {
    by_host: HashMap<String, Vec<usize>>,
    by_prefix: HashMap<String, Vec<usize>>,
    /// The lengths of the prefixes in `by_prefix`, longest first.
    prefix_lengths: Vec<usize>,
    regexes: Option<RegexSet>,
    /// The route of each regex in `regexes`.
    regex_routes: Vec<usize>,
    always: Vec<usize>,
}

impl RouteIndex {
    /// The index of `routes`, numbered in this order.
    pub fn new(routes: Vec<Route>) -> Self {
        Self::filing_elsewhere(routes, |_| false)
    }

    /// The index of `routes`, numbered in this order, leaving out of the always-tried ones
    /// those numbers for which `elsewhere` holds: another index files them, and
    /// [`matching_with`](Self::matching_with) is handed them when the request meets its
    /// condition.
    pub fn filing_elsewhere(routes: Vec<Route>, elsewhere: impl Fn(usize) -> bool) -> Self {
        let filed = (routes.len() >= INDEX_FROM).then(|| file(&routes, elsewhere));
        Self { routes, filed }
    }

    /// The routes, in order.
    pub fn routes(&self) -> &[Route] {
        &self.routes
    }

    /// The numbers of the routes a request with `facts` is on, in order.
    pub fn matching(&self, facts: &RouteFacts<'_>) -> Matches {
        self.matching_with(facts, [])
    }

    /// The numbers of the routes a request with `facts` is on, in order, given the routes
    /// another index found the request meets the condition of (`elsewhere`).
    pub fn matching_with(
        &self,
        facts: &RouteFacts<'_>,
        elsewhere: impl IntoIterator<Item = usize>,
    ) -> Matches {
        let Some(filed) = &self.filed else {
            return (0..self.routes.len())
                .filter(|&i| self.routes[i].matches(facts))
                .collect();
        };
        let mut found: Matches = filed.candidates(facts).chain(elsewhere).collect();
        found.sort_unstable();
        found.dedup();
        found.retain(|i| self.routes[*i].matches(facts));
        found
    }

    /// The first route a request with `facts` is on.
    pub fn first(&self, facts: &RouteFacts<'_>) -> Option<usize> {
        match &self.filed {
            None => self.routes.iter().position(|r| r.matches(facts)),
            Some(_) => self.matching(facts).first().copied(),
        }
    }
}

/// Files each route under the one condition it is looked up by.
fn file(routes: &[Route], elsewhere: impl Fn(usize) -> bool) -> Filed {
    let mut filed = Filed::default();
    let mut patterns = Vec::new();
    for (i, route) in routes.iter().enumerate() {
        if let Some(host) = &route.host {
            filed
                .by_host
                .entry(host.to_ascii_lowercase())
                .or_default()
                .push(i);
        } else if let Some(prefix) = &route.path_prefix {
            filed.by_prefix.entry(prefix.clone()).or_default().push(i);
        } else if let Some(literal) = route
            .path_regex
            .as_ref()
            .and_then(|r| literal_prefix(r.as_str()))
        {
            filed.by_prefix.entry(literal).or_default().push(i);
        } else if let Some(regex) = &route.path_regex {
            patterns.push(regex.as_str().to_owned());
            filed.regex_routes.push(i);
        } else if !elsewhere(i) {
            filed.always.push(i);
        }
    }
    let mut lengths: Vec<usize> = filed.by_prefix.keys().map(String::len).collect();
    lengths.sort_unstable_by(|a, b| b.cmp(a));
    lengths.dedup();
    filed.prefix_lengths = lengths;
    // Each pattern compiled alone already, so the set compiles too; if it ever did not, the
    // regex routes are tried always instead.
    match RegexSet::new(&patterns) {
        Ok(set) if !patterns.is_empty() => filed.regexes = Some(set),
        Ok(_) => {}
        Err(_) => filed.always.append(&mut filed.regex_routes),
    }
    filed
}

/// The literal text every match of `pattern` starts with, when it is anchored (`^`) and has
/// no alternation: `^/api/v[0-9]+` → `/api/v`. `None` when there is none worth filing by.
fn literal_prefix(pattern: &str) -> Option<String> {
    let rest = pattern.strip_prefix('^')?;
    if pattern.contains('|') {
        return None;
    }
    let end = rest
        .find(|c: char| "\\.+*?()[]{}^$".contains(c))
        .unwrap_or(rest.len());
    let mut literal = rest[..end].to_owned();
    // A quantifier after the run makes its last character optional.
    if rest[end..].starts_with(['?', '*', '{']) {
        literal.pop();
    }
    (!literal.is_empty()).then_some(literal)
}

impl Filed {
    /// Every route filed under a condition the request meets (unsorted, maybe repeated).
    fn candidates<'a>(&'a self, facts: &'a RouteFacts<'_>) -> impl Iterator<Item = usize> + 'a {
        // The request's host is lowercase already (`RouteFacts`).
        let by_host = facts
            .host
            .and_then(|h| self.by_host.get(h))
            .into_iter()
            .flatten()
            .copied();
        let by_prefix = self
            .prefix_lengths
            .iter()
            .filter_map(|&len| facts.path.get(..len))
            .filter_map(|prefix| self.by_prefix.get(prefix))
            .flatten()
            .copied();
        let by_regex = self
            .regexes
            .iter()
            .flat_map(|set| set.matches(facts.path).into_iter())
            .map(|i| self.regex_routes[i]);
        by_host
            .chain(by_prefix)
            .chain(by_regex)
            .chain(self.always.iter().copied())
    }
}

#[cfg(test)]
mod tests;
