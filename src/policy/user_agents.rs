//! Every policy's `match.user_agent` matched at once: one `RegexSet` pass over the request's
//! User-Agent, made only when a candidate policy asks, so the cost of a request stays flat in
//! the number of User-Agent rules. Below [`INDEX_FROM`] rules, each regex is tried on its own
//! (cheaper than building the set's answer).

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
}

impl UserAgentIndex {
    /// The index of the policies whose conditions are `conditions`, numbered in this order.
    pub fn new<'c>(conditions: impl Iterator<Item = &'c Conditions>) -> Self {
        let mut patterns = Vec::new();
        let slots: Vec<Option<usize>> = conditions
            .map(|c| {
                c.user_agent.as_ref().map(|ua| {
                    patterns.push(ua.0.as_str().to_owned());
                    patterns.len() - 1
                })
            })
            .collect();
        // Each pattern compiled on its own already, so the set compiles too; a set too big for
        // the regex engine's limits is not built and each regex is tried instead.
        let set = (patterns.len() >= INDEX_FROM)
            .then(|| RegexSet::new(&patterns).ok())
            .flatten();
        Self { set, slots }
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
}
