//! Allow- and deny-lists, checked before any limit: by client network (`cidr:10.0.0.0/8`) or
//! by an identity value (`header:x-api-key=partner-key`, `jwt:sub=monitoring`). Denied
//! requests get 403; allowed ones skip limiting. A request on both lists is denied.

use super::{IpFolding, Network, NetworkIndex, Request, Source};
use ipnet::IpNet;
use std::fmt;
use std::str::FromStr;

/// One entry of a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    /// The client address is inside this network.
    Network(IpNet),
    /// The source yields exactly this value.
    Value {
        /// Where the value is read.
        source: Source,
        /// The value, as configured (never printed).
        value: Vec<u8>,
    },
}

/// A list entry that is not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "access rule `{0}` must be cidr:<network> or <source>=<value> (header, cookie, query or jwt)"
)]
pub struct RuleError(String);

impl FromStr for Rule {
    type Err = RuleError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let refuse = || RuleError(text.to_owned());
        if let Some(net) = text.strip_prefix("cidr:") {
            return parse_network(net).map(Rule::Network).ok_or_else(refuse);
        }
        let (source, value) = text.split_once('=').ok_or_else(refuse)?;
        let source: Source = source.parse().map_err(|_| refuse())?;
        if source == Source::Ip || value.is_empty() {
            return Err(refuse());
        }
        Ok(Rule::Value {
            source,
            value: value.as_bytes().to_vec(),
        })
    }
}

/// A network (`10.0.0.0/8`) or a single address (`10.0.0.1`), IPv4-mapped ones as IPv4, host
/// bits cleared (see [`Network`] to know whether there were any).
pub fn parse_network(text: &str) -> Option<IpNet> {
    Network::read(text).map(|n| n.net)
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::Network(net) => write!(f, "cidr:{net}"),
            Rule::Value { source, .. } => write!(f, "{source}=<hidden>"),
        }
    }
}

/// What the lists say about a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// On the deny-list: 403.
    Denied,
    /// On the allow-list: no limit applies.
    Allowed,
    /// On neither: the policies decide.
    Limited,
}

/// The configured lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccessRules {
    allow: List,
    deny: List,
}

/// One list, its networks indexed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct List {
    /// The rules as configured, in order.
    rules: Vec<Rule>,
    nets: NetworkIndex<()>,
}

impl List {
    fn new(rules: Vec<Rule>) -> Self {
        let mut nets = NetworkIndex::default();
        for rule in &rules {
            if let Rule::Network(net) = rule {
                nets.insert(*net, ());
            }
        }
        Self { rules, nets }
    }

    fn matches(&self, req: &Request<'_>) -> bool {
        let by_net = req.client_ip.is_some_and(|ip| self.nets.holds(ip));
        by_net
            || self.rules.iter().any(|rule| match rule {
                Rule::Network(_) => false,
                Rule::Value { source, value } => matches!(
                    source.value(req, &IpFolding::default()),
                    Ok(Some(v)) if *v == **value
                ),
            })
    }
}

impl AccessRules {
    /// Requests matching `allow` skip limiting; those matching `deny` are refused with 403.
    pub fn new(allow: Vec<Rule>, deny: Vec<Rule>) -> Self {
        Self {
            allow: List::new(allow),
            deny: List::new(deny),
        }
    }

    /// The allow-list, as configured.
    pub fn allow(&self) -> &[Rule] {
        &self.allow.rules
    }

    /// The deny-list, as configured.
    pub fn deny(&self) -> &[Rule] {
        &self.deny.rules
    }

    /// What the lists say about `req`.
    pub fn check(&self, req: &Request<'_>) -> Access {
        if self.deny.matches(req) {
            Access::Denied
        } else if self.allow.matches(req) {
            Access::Allowed
        } else {
            Access::Limited
        }
    }

    /// Whether both lists are empty.
    pub fn is_empty(&self) -> bool {
        self.allow.rules.is_empty() && self.deny.rules.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::{HeaderMap, HeaderValue};

    fn rules(allow: &[&str], deny: &[&str]) -> AccessRules {
        AccessRules::new(
            allow.iter().map(|r| r.parse().unwrap()).collect(),
            deny.iter().map(|r| r.parse().unwrap()).collect(),
        )
    }

    #[test]
    fn networks_and_values_are_matched_and_deny_wins() {
        let r = rules(
            &["cidr:10.0.0.0/8", "header:x-api-key=partner"],
            &["cidr:10.6.6.0/24"],
        );
        let mut headers = HeaderMap::new();
        let check = |h: &HeaderMap, ip: &str| {
            r.check(&Request::new(h, None, Some(ip.parse().unwrap()), None))
        };
        assert_eq!(check(&headers, "10.1.1.1"), Access::Allowed);
        assert_eq!(check(&headers, "10.6.6.6"), Access::Denied);
        assert_eq!(check(&headers, "192.0.2.1"), Access::Limited);
        headers.insert("x-api-key", HeaderValue::from_static("partner"));
        assert_eq!(check(&headers, "192.0.2.1"), Access::Allowed);
        headers.insert("x-api-key", HeaderValue::from_static("partner2"));
        assert_eq!(check(&headers, "192.0.2.1"), Access::Limited);
    }

    #[test]
    fn rules_parse_and_print_without_secrets() {
        assert_eq!(
            "cidr:10.1.2.3".parse::<Rule>().unwrap().to_string(),
            "cidr:10.1.2.3/32"
        );
        assert_eq!(
            "cidr:10.1.2.3/8".parse::<Rule>().unwrap().to_string(),
            "cidr:10.0.0.0/8"
        );
        assert_eq!(
            "jwt:sub=bot".parse::<Rule>().unwrap().to_string(),
            "jwt:sub=<hidden>"
        );
        for bad in ["cidr:nope", "ip=1.2.3.4", "header:x=", "what"] {
            assert!(bad.parse::<Rule>().is_err(), "{bad}");
        }
    }
}
