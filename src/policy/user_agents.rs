//! Every policy's `match.user_agent` matched at once: one `RegexSet` pass over the request's
//! User-Agent, so the cost of a request stays flat in the number of User-Agent rules. The
//! index files the policies it holds ([`files`](UserAgentIndex::files)): the route index
//! leaves those on no host, path prefix or regex out of the routes it always tries, and takes
//! the policies whose User-Agent matched as candidates instead. Below [`INDEX_FROM`] rules,
//! each regex is tried on its own (cheaper than building the set's answer).

use super::{Conditions, UserAgent, INDEX_FROM};
use http::header::USER_AGENT;
use http::HeaderMap;
use regex::RegexSet;
use std::cell::OnceCell;

/// The User-Agent rules of a list of policies.
#[derive(Debug, Default)]
pub struct UserAgentIndex {
    set: Option<RegexSet>,
    /// The pattern of each policy in `set`, by the policy's number.
    slots: Vec<Option<usize>>,
    /// The policy of each pattern in `set`.
    policies: Vec<usize>,
}

impl UserAgentIndex {
    /// The index of the policies whose conditions are `conditions`, numbered in this order.
    pub fn new<'c>(conditions: impl Iterator<Item = &'c Conditions>) -> Self {
        let (mut patterns, mut policies) = (Vec::new(), Vec::new());
        let slots: Vec<Option<usize>> = conditions
            .enumerate()
            .map(|(i, c)| {
                c.user_agent.as_ref().map(|ua| {
                    patterns.push(ua.0.as_str().to_owned());
                    policies.push(i);
                    patterns.len() - 1
                })
            })
            .collect();
        // Each pattern compiled on its own already, so the set compiles too; a set too big for
        // the regex engine's limits is not built and each regex is tried instead.
        let set = (patterns.len() >= INDEX_FROM)
            .then(|| RegexSet::new(&patterns).ok())
            .flatten();
        Self {
            set,
            slots,
            policies,
        }
    }

    /// Whether policy number `policy` is found through this index (its rule is in the set).
    pub fn files(&self, policy: usize) -> bool {
        self.set.is_some() && self.slots.get(policy).is_some_and(Option::is_some)
    }

    /// The request's User-Agent, matched against the index when first asked.
    pub fn seen<'r>(&'r self, headers: &'r HeaderMap) -> SeenUserAgent<'r> {
        SeenUserAgent {
            index: self,
            headers,
            matched: OnceCell::new(),
        }
    }
}

/// One request's User-Agent, as the index sees it.
pub struct SeenUserAgent<'r> {
    index: &'r UserAgentIndex,
    headers: &'r HeaderMap,
    /// Which patterns a User-Agent value matches, worked out on first use.
    matched: OnceCell<Vec<bool>>,
}

impl SeenUserAgent<'_> {
    /// Whether the User-Agent rule `ua` of policy number `policy` holds.
    pub fn matches(&self, policy: usize, ua: &UserAgent) -> bool {
        let slot = self.index.slots.get(policy).copied().flatten();
        match (&self.index.set, slot) {
            (Some(set), Some(slot)) => self.matched(set)[slot],
            _ => ua.matches(self.headers),
        }
    }

    /// The policies this index files whose User-Agent rule the request's User-Agent matches.
    pub fn candidates(&self) -> impl Iterator<Item = usize> + '_ {
        let matched = self.index.set.as_ref().map(|set| self.matched(set));
        matched.into_iter().flat_map(move |matched| {
            matched
                .iter()
                .enumerate()
                .filter(|(_, hit)| **hit)
                .map(|(slot, _)| self.index.policies[slot])
        })
    }

    fn matched(&self, set: &RegexSet) -> &[bool] {
        self.matched.get_or_init(|| {
            let mut matched = vec![false; set.len()];
            let values = self.headers.get_all(USER_AGENT).iter();
            for value in values.filter_map(|v| v.to_str().ok()) {
                for slot in set.matches(value).iter() {
                    matched[slot] = true;
                }
            }
            matched
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;
    use regex::Regex;

    fn with_user_agent(pattern: &str) -> Conditions {
        Conditions {
            user_agent: Some(UserAgent(Regex::new(pattern).unwrap())),
            ..Conditions::default()
        }
    }

    #[test]
    fn the_index_answers_as_each_regex_would() {
        let mut policies: Vec<Conditions> = (0..INDEX_FROM * 2)
            .map(|i| with_user_agent(&format!("^bot-{i}/")))
            .collect();
        policies.insert(3, Conditions::default());
        policies.push(with_user_agent("(?i)gptbot"));
        let index = UserAgentIndex::new(policies.iter());
        assert!(index.set.is_some());
        for agent in [
            "bot-7/1.0",
            "Mozilla/5.0 (compatible; GPTBot/1.2)",
            "curl/8",
            "",
        ] {
            let mut headers = HeaderMap::new();
            headers.insert(USER_AGENT, HeaderValue::from_str(agent).unwrap());
            let seen = index.seen(&headers);
            for (i, policy) in policies.iter().enumerate() {
                if let Some(ua) = &policy.user_agent {
                    assert_eq!(seen.matches(i, ua), ua.matches(&headers), "{agent} {i}");
                }
            }
        }
    }

    #[test]
    fn policies_filed_by_user_agent_are_found_as_if_each_were_tried() {
        use crate::policy::{Route, RouteFacts, RouteIndex};
        use http::Method;
        // Every third policy is on a path prefix; the others on every route.
        let routes: Vec<Route> = (0..INDEX_FROM * 3)
            .map(|i| Route {
                path_prefix: (i % 3 == 0).then(|| format!("/p{i}/")),
                ..Route::default()
            })
            .collect();
        let policies: Vec<Conditions> = (0..routes.len())
            .map(|i| match i % 2 {
                0 => with_user_agent(&format!("Agent{}/", i % 5)),
                _ => Conditions::default(),
            })
            .collect();
        let user_agents = UserAgentIndex::new(policies.iter());
        let index = RouteIndex::filing_elsewhere(routes.clone(), |i| user_agents.files(i));
        for (agent, path) in [
            ("Agent1/2", "/p3/x"),
            ("Agent3/1", "/"),
            ("", "/p0/"),
            ("x", "/"),
        ] {
            let mut headers = HeaderMap::new();
            headers.insert(USER_AGENT, HeaderValue::from_str(agent).unwrap());
            let facts = RouteFacts {
                method: &Method::GET,
                host: None,
                path,
            };
            let seen = user_agents.seen(&headers);
            let found: Vec<usize> = index
                .matching_with(&facts, seen.candidates())
                .into_iter()
                .filter(|&i| {
                    policies[i]
                        .user_agent
                        .as_ref()
                        .is_none_or(|ua| seen.matches(i, ua))
                })
                .collect();
            let each: Vec<usize> = (0..routes.len())
                .filter(|&i| routes[i].matches(&facts))
                .filter(|&i| {
                    policies[i]
                        .user_agent
                        .as_ref()
                        .is_none_or(|ua| ua.matches(&headers))
                })
                .collect();
            assert_eq!(found, each, "{agent} {path}");
        }
    }
}
