//! Request facts as identity parts: `path`, `method` and `host` (so `ip+path` gives each
//! caller a bucket per endpoint), and `const:<name>`, one value for every request (one bucket
//! shared by all callers: a fleet-wide cap that protects a backend).

use super::source_error::SourceError;
use super::{IdentityChain, Request};
use std::borrow::Cow;
use std::fmt;

/// A fact of the request that can identify a caller, alone or in a composite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fact {
    /// The path the policies match (no query).
    Path,
    /// The request method.
    Method,
    /// The host the request is for, lowercase, without a port.
    Host,
    /// The same value for every request: one bucket per policy for everyone.
    Const(String),
}

/// The facts the proxy read from a request (absent ones yield nothing).
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestFacts<'a> {
    /// The path the policies match.
    pub path: Option<&'a str>,
    /// The method.
    pub method: Option<&'a str>,
    /// The host, when something needs it.
    pub host: Option<&'a str>,
}

impl Fact {
    /// The fact `text` names, or `None` when it names another kind of source.
    pub(super) fn parse(text: &str) -> Result<Option<Fact>, SourceError> {
        Ok(match text {
            "path" => Some(Fact::Path),
            "method" => Some(Fact::Method),
            "host" => Some(Fact::Host),
            _ => match text.strip_prefix("const:") {
                Some(name) if name.is_empty() || name.contains(['+', ' ']) => {
                    return Err(SourceError::BadName(text.to_owned()));
                }
                Some(name) => Some(Fact::Const(name.to_owned())),
                None => None,
            },
        })
    }

    /// This fact's value in `req`.
    pub(super) fn value<'r>(&self, req: &'r Request<'_>) -> Option<Cow<'r, [u8]>> {
        let facts = &req.facts;
        let text = match self {
            Fact::Path => facts.path?,
            Fact::Method => facts.method?,
            Fact::Host => facts.host?,
            Fact::Const(name) => return Some(Cow::Owned(name.as_bytes().to_vec())),
        };
        Some(Cow::Borrowed(text.as_bytes()))
    }
}

impl fmt::Display for Fact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fact::Path => f.write_str("path"),
            Fact::Method => f.write_str("method"),
            Fact::Host => f.write_str("host"),
            Fact::Const(name) => write!(f, "const:{name}"),
        }
    }
}

impl<'a> Request<'a> {
    /// These facts of the request, for the `path`, `method` and `host` sources.
    pub fn with_facts(mut self, facts: RequestFacts<'a>) -> Self {
        self.facts = facts;
        self
    }
}

impl IdentityChain {
    /// Whether a source of the chain reads the host (so the proxy must work it out).
    pub fn uses_host(&self) -> bool {
        self.sources.iter().any(|s| s.uses_host())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::{Identity, IpFolding, SourceSpec};
    use http::HeaderMap;

    fn identify(spec: &str, path: &str, method: &str) -> Option<Identity> {
        let headers = HeaderMap::new();
        let ip = Some("10.0.0.1".parse().unwrap());
        let req = Request::new(&headers, None, ip, None).with_facts(RequestFacts {
            path: Some(path),
            method: Some(method),
            host: None,
        });
        let spec: SourceSpec = spec.parse().unwrap();
        let key = crate::identity::IdentityKey::from_bytes([0; 32]);
        spec.identity(&req, &IpFolding::default(), &key).unwrap()
    }

    #[test]
    fn ip_and_path_give_a_bucket_per_endpoint() {
        let a = identify("ip+path", "/ep/a", "GET");
        assert_eq!(a, identify("ip+path", "/ep/a", "POST"));
        assert_ne!(a, identify("ip+path", "/ep/b", "GET"));
        assert_ne!(
            identify("method", "/", "GET"),
            identify("method", "/", "POST")
        );
        assert_eq!(identify("host", "/", "GET"), None, "no host: absent");
    }

    #[test]
    fn a_constant_is_one_caller_for_everyone() {
        assert_eq!(
            identify("const:backend", "/a", "GET"),
            identify("const:backend", "/b", "PUT")
        );
        assert_ne!(
            identify("const:backend", "/a", "GET"),
            identify("const:other", "/a", "GET")
        );
        assert_eq!(
            "const:".parse::<SourceSpec>(),
            Err(SourceError::BadName("const:".into()))
        );
        let spec: SourceSpec = "const:x+host".parse().unwrap();
        assert!(spec.uses_host());
        assert_eq!(spec.to_string(), "const:x+host");
    }
}
