//! How a caller's digest is made from what identified it: the one recipe that the proxy's
//! buckets, the operators' bans, callers named by an admin call and the access log's pass
//! digests share, so that a digest shown or stored anywhere always names the same caller.
//!
//! The digest is [`Identity::of`] the spec's tag (`header:x-tenant+ip`) and the spec's raw value:
//! a single part's value is its own; the parts of a composite are each prefixed by their length
//! (u32, little-endian), so that no two combinations run together (`source::combined`, which
//! the requests' values and the values an operator names both go through).

use super::jwt::TokenError;
use super::pass::Pass;
use super::source::{IpFolding, SourceSpec, PASS};
use super::{Identity, IdentityKey, Request};

impl SourceSpec {
    /// The digest of the caller this spec read `value` of (its combined raw value).
    pub fn digest(&self, value: &[u8], key: &IdentityKey) -> Identity {
        Identity::of(key, self.tag(), value)
    }

    /// The caller `req` shows to this spec, digested with `key`: `None` when a part yields
    /// nothing, an error when a part is a bearer token that does not verify.
    pub fn identity(
        &self,
        req: &Request<'_>,
        folding: &IpFolding,
        key: &IdentityKey,
    ) -> Result<Option<Identity>, TokenError> {
        Ok(self
            .value(req, folding)?
            .map(|value| self.digest(&value, key)))
    }
}

impl IpFolding {
    /// The digest the `ip` source gives an address folded this way: what a ban of the
    /// address (or of its network) is named by.
    pub fn digest(&self, ip: std::net::IpAddr, key: &IdentityKey) -> Identity {
        Identity::of(key, "ip", &self.fold(ip))
    }
}

impl Pass {
    /// The digest the `pass` source gives the request that carried this pass: what the access
    /// log shows and what an operator names the pass's holder by.
    pub fn digest(&self, key: &IdentityKey) -> Identity {
        Identity::of(key, PASS, &self.id.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::source::combined;
    use crate::identity::{PassId, RequestFacts};
    use http::HeaderMap;
    use std::borrow::Cow;

    const KEY: IdentityKey = IdentityKey::from_bytes([7; 32]);

    #[test]
    fn a_composite_prefixes_each_part_by_its_length() {
        let parts = vec![Cow::Borrowed(&b"ab"[..]), Cow::Borrowed(&b"c"[..])];
        assert_eq!(&*combined(parts), b"\x02\0\0\0ab\x01\0\0\0c");
        assert_eq!(&*combined(vec![Cow::Borrowed(&b"ab"[..])]), b"ab");
    }

    #[test]
    fn a_spec_digests_what_it_reads() {
        let headers = HeaderMap::new();
        let ip = Some("10.0.0.1".parse().unwrap());
        let req = Request::new(&headers, None, ip, None).with_facts(RequestFacts {
            path: Some("/a"),
            method: Some("GET"),
            host: None,
        });
        let spec: SourceSpec = "ip+path".parse().unwrap();
        let value = spec.value(&req, &IpFolding::default()).unwrap().unwrap();
        let expected = Identity::of(&KEY, "ip+path", &value);
        let found = spec.identity(&req, &IpFolding::default(), &KEY).unwrap();
        assert_eq!(found, Some(expected));
        let absent: SourceSpec = "header:x-api-key".parse().unwrap();
        assert_eq!(
            absent.identity(&req, &IpFolding::default(), &KEY).unwrap(),
            None
        );
    }

    #[test]
    fn a_pass_digest_is_the_pass_source_digest() {
        let spec: SourceSpec = "pass".parse().unwrap();
        let id = PassId([9; 16]);
        assert_eq!(spec.tag(), PASS);
        assert_eq!(spec.digest(&id.0, &KEY), Identity::of(&KEY, "pass", &id.0));
    }
}
