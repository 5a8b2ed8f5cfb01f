//! What a request shows, beyond its route: headers present, absent or matching, the
//! User-Agent, the network of the resolved client address, and what is known of its sender
//! (`sender.rs`).

use super::SenderConditions;
use crate::identity::Request;
use http::header::USER_AGENT;
use http::{HeaderMap, HeaderName};
use ipnet::IpNet;
use regex::Regex;
use std::fmt;
use std::net::IpAddr;

/// One `match.headers` entry: what the named header must show.
#[derive(Debug, Clone)]
pub enum HeaderRule {
    /// `true`: the header is sent.
    Present,
    /// `false`: the header is not sent.
    Absent,
    /// A string: one of the header's values matches this regular expression.
    Matches(Regex),
}

impl PartialEq for HeaderRule {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Present, Self::Present) | (Self::Absent, Self::Absent) => true,
            (Self::Matches(a), Self::Matches(b)) => a.as_str() == b.as_str(),
            _ => false,
        }
    }
}

impl HeaderRule {
    /// Whether `headers` show what this rule asks of the header `name`.
    pub fn holds(&self, headers: &HeaderMap, name: &HeaderName) -> bool {
        match self {
            Self::Present => headers.contains_key(name),
            Self::Absent => !headers.contains_key(name),
            Self::Matches(regex) => any_value_matches(headers, name, regex),
        }
    }
}

/// Whether a value of the header `name` is text matching `regex` (never when absent).
fn any_value_matches(headers: &HeaderMap, name: &HeaderName, regex: &Regex) -> bool {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| regex.is_match(v))
}

/// A policy's conditions on what a request shows; every one given must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conditions {
    /// `match.headers`: each header and what it must show.
    pub headers: Vec<(HeaderName, HeaderRule)>,
    /// `match.user_agent`: the User-Agent must match (an absent one never does).
    pub user_agent: Option<UserAgent>,
    /// `match.networks`: the resolved client address must be in one of these.
    pub networks: Vec<IpNet>,
    /// `match.asn`, `country`, `bot` and `verified`.
    pub sender: SenderConditions,
    /// `match.proven`: whether the request must (or must not) have proven who it is (a
    /// verified source's proven value, or a verified bearer token).
    pub proven: Option<bool>,
}

/// A regular expression on the User-Agent header.
#[derive(Debug, Clone)]
pub struct UserAgent(pub Regex);

impl PartialEq for UserAgent {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_str() == other.0.as_str()
    }
}

impl UserAgent {
    /// Whether a User-Agent of `headers` matches (never when there is none).
    pub fn matches(&self, headers: &HeaderMap) -> bool {
        any_value_matches(headers, &USER_AGENT, &self.0)
    }
}

impl Conditions {
    /// Whether `req` shows everything asked.
    pub fn hold(&self, req: &Request<'_>) -> bool {
        self.hold_given(req, |ua| ua.matches(req.headers))
    }

    /// Whether `req` shows everything asked, the User-Agent condition answered by
    /// `user_agent_matches` (an index that matched every policy's User-Agent at once).
    pub fn hold_given(
        &self,
        req: &Request<'_>,
        user_agent_matches: impl FnOnce(&UserAgent) -> bool,
    ) -> bool {
        self.headers_hold(req.headers)
            && self.network_holds(req.client_ip)
            && self.sender.hold(req.traits())
            && self.user_agent.as_ref().is_none_or(user_agent_matches)
            && self.proven.is_none_or(|wanted| req.proven() == wanted)
    }

    /// Whether no condition is given (every request holds).
    pub fn is_empty(&self) -> bool {
        self.headers.is_empty()
            && self.user_agent.is_none()
            && self.networks.is_empty()
            && self.sender.is_empty()
            && self.proven.is_none()
    }

    fn headers_hold(&self, headers: &HeaderMap) -> bool {
        self.headers
            .iter()
            .all(|(name, rule)| rule.holds(headers, name))
    }

    fn network_holds(&self, client: Option<IpAddr>) -> bool {
        if self.networks.is_empty() {
            return true;
        }
        client.is_some_and(|ip| {
            let ip = ip.to_canonical();
            self.networks.iter().any(|n| n.contains(&ip))
        })
    }
}

impl fmt::Display for Conditions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, rule) in &self.headers {
            match rule {
                HeaderRule::Present => write!(f, " with {name}")?,
                HeaderRule::Absent => write!(f, " without {name}")?,
                HeaderRule::Matches(r) => write!(f, " {name} ~ {}", r.as_str())?,
            }
        }
        if let Some(ua) = &self.user_agent {
            write!(f, " user-agent ~ {}", ua.0.as_str())?;
        }
        if !self.networks.is_empty() {
            let nets: Vec<String> = self.networks.iter().map(IpNet::to_string).collect();
            write!(f, " from {}", nets.join(", "))?;
        }
        match self.proven {
            Some(true) => f.write_str(" proven")?,
            Some(false) => f.write_str(" not proven")?,
            None => {}
        }
        self.sender.fmt(f)
    }
}

#[cfg(test)]
mod tests;
