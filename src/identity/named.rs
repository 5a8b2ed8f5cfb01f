//! A caller as an operator names it: a source (`header:x-api-key`, `ip`, `header:x-tenant+ip`)
//! and the raw value a request would carry there. Its identity is the digest the proxy makes
//! of such a request, by the same spelling rules (`source.rs`): so a ban or an override named
//! `alice` meets the requests that send `x-api-key: alice`, and the raw value goes no further.

use super::source::{combined, unquote};
use super::{Identity, IdentityKey, IpFolding, Source, SourceSpec, MAX_VALUE_LEN};
use std::borrow::Cow;
use std::net::IpAddr;

/// A source and the raw values of its parts (one for a single source).
#[derive(Debug, Clone, Copy)]
pub struct NamedCaller<'a> {
    /// The source, as the config spells it.
    pub source: &'a SourceSpec,
    /// One raw value per part of the source, in order.
    pub values: &'a [&'a str],
}

/// Why a named caller is no caller a request could be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NamedCallerError {
    /// The number of values is not the number of the source's parts.
    #[error("`{spec}` takes {parts} value(s), not {given}")]
    Count {
        /// The source.
        spec: String,
        /// How many parts it has.
        parts: usize,
        /// How many values were given.
        given: usize,
    },
    /// A value no request could carry there: empty, too long, or not an address for `ip`.
    #[error("the value for `{0}` is empty, longer than 4096 bytes or not valid there")]
    Value(String),
    /// A pass named other than by its digest, alone.
    #[error("a `pass` is named alone, by the 32-hex-digit digest the access log shows")]
    Pass,
}

impl NamedCaller<'_> {
    /// The caller's identity, digested with `key`, addresses folded by `folding`.
    pub fn identity(
        &self,
        folding: &IpFolding,
        key: &IdentityKey,
    ) -> Result<Identity, NamedCallerError> {
        let parts = self.source.parts();
        if let ([Source::Pass], [digest]) = (parts, self.values) {
            // A pass's id is never shown: it is named by the digest the access log shows.
            return Identity::from_hex(digest.trim()).ok_or(NamedCallerError::Pass);
        }
        if parts.len() != self.values.len() {
            return Err(NamedCallerError::Count {
                spec: self.source.to_string(),
                parts: parts.len(),
                given: self.values.len(),
            });
        }
        let mut values = Vec::with_capacity(parts.len());
        for (part, value) in parts.iter().zip(self.values) {
            values.push(Cow::Owned(part_value(part, value, folding)?));
        }
        Ok(self.source.digest(&combined(values), key))
    }
}

/// The bytes `part` would read from a request carrying `value` there.
fn part_value(
    part: &Source,
    value: &str,
    folding: &IpFolding,
) -> Result<Vec<u8>, NamedCallerError> {
    let bytes: Vec<u8> = match part {
        Source::Header(_) | Source::Query(_) => value.as_bytes().trim_ascii().to_vec(),
        Source::Cookie(_) => unquote(value.as_bytes().trim_ascii()).to_vec(),
        Source::Jwt(_) | Source::Fact(_) => value.as_bytes().to_vec(),
        Source::Ip => match value.trim().parse::<IpAddr>() {
            Ok(ip) => folding.fold(ip),
            Err(_) => return Err(NamedCallerError::Value(part.to_string())),
        },
        Source::Sender(sender) => sender
            .named_value(value)
            .ok_or_else(|| NamedCallerError::Value(part.to_string()))?,
        // Named alone, by its digest (above): never as a part of a composite.
        Source::Pass => return Err(NamedCallerError::Pass),
    };
    let bytes = match part {
        Source::Fact(super::Fact::Const(name)) => name.as_bytes().to_vec(),
        _ => bytes,
    };
    match bytes.is_empty() || bytes.len() > MAX_VALUE_LEN {
        true => Err(NamedCallerError::Value(part.to_string())),
        false => Ok(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::{IdentityChain, Request, RequestFacts};
    use http::{HeaderMap, HeaderValue};

    fn key() -> IdentityKey {
        IdentityKey::from_bytes([7; 32])
    }

    fn named(source: &str, values: &[&str]) -> Result<Identity, NamedCallerError> {
        let spec: SourceSpec = source.parse().unwrap();
        let caller = NamedCaller {
            source: &spec,
            values,
        };
        caller.identity(&IpFolding::default(), &key())
    }

    fn identified(source: &str, req: &Request<'_>) -> Identity {
        let chain = IdentityChain::of(vec![source.parse().unwrap()]);
        chain.identify(req, &key()).unwrap()
    }

    #[test]
    fn a_named_caller_is_the_caller_a_request_carrying_the_value_is() {
        let mut headers = HeaderMap::new();
        headers.insert("x-api-key", HeaderValue::from_static(" alice "));
        headers.insert("cookie", HeaderValue::from_static("sid=\"dave\"; x=1"));
        let ip = Some("2001:db8::7".parse().unwrap());
        let req = Request::new(&headers, Some("tel=%2B4912"), ip, None).with_facts(RequestFacts {
            path: Some("/a"),
            method: Some("GET"),
            host: None,
        });
        let cases = [
            ("header:x-api-key", vec!["alice"]),
            ("cookie:sid", vec!["dave"]),
            ("query:tel", vec!["+4912"]),
            ("ip", vec!["2001:db8::1"]),
            ("header:x-api-key+ip", vec!["alice", "2001:db8::9"]),
            ("ip+path", vec!["2001:db8::7", "/a"]),
            ("const:all", vec!["anything"]),
        ];
        for (source, values) in cases {
            assert_eq!(
                named(source, &values).unwrap(),
                identified(source, &req),
                "{source}"
            );
        }
    }

    #[test]
    fn values_no_request_could_carry_are_refused() {
        assert!(matches!(
            named("ip", &["not-an-address"]),
            Err(NamedCallerError::Value(_))
        ));
        assert!(matches!(
            named("header:x-api-key", &["  "]),
            Err(NamedCallerError::Value(_))
        ));
        assert!(matches!(
            named("header:x-tenant+ip", &["acme"]),
            Err(NamedCallerError::Count { parts: 2, .. })
        ));
    }

    #[test]
    fn a_pass_is_named_alone_by_the_digest_its_requests_have() {
        use crate::identity::{Bind, ChallengeKind, Pass, PassId, Reach};
        let pass = Pass {
            id: PassId([9; 16]),
            kind: ChallengeKind::Refresh,
            bind: Bind::Network,
            policy: 1,
            expires_s: 0,
        };
        let headers = HeaderMap::new();
        let req = Request::new(&headers, None, None, None).with_pass(Some(&pass), Reach::Page);
        let seen = identified("pass", &req);
        assert_eq!(named("pass", &[&seen.hex()]), Ok(seen));
        assert_eq!(
            named("pass", &["not-a-digest"]),
            Err(NamedCallerError::Pass)
        );
        assert_eq!(
            named("pass+ip", &[&seen.hex(), "192.0.2.1"]),
            Err(NamedCallerError::Pass)
        );
    }
}
