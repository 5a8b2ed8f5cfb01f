//! Who is calling: a request's facts → an [`Identity`], from an ordered list of sources.
//!
//! The first source that yields a non-empty value wins. The value never leaves this module in
//! the clear: it is hashed (BLAKE3, with the source's name as a prefix so that equal values from
//! different sources stay apart) into a 128-bit digest, which is what stores, logs and the
//! offenders view see. A request no source identifies shares one `anonymous` identity, so
//! dropping every identifying header earns no fresh bucket.

use http::header::{HeaderMap, HeaderName, COOKIE};
use std::fmt;
use std::net::IpAddr;

/// A caller, as a digest of the source and value that identified it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Identity([u8; 16]);

impl Identity {
    /// The identity whose source is `tag` and whose raw value is `value`.
    pub fn of(tag: &str, value: &[u8]) -> Self {
        let mut hasher = blake3::Hasher::new();
        hasher.update(tag.as_bytes());
        hasher.update(&[0]);
        hasher.update(value);
        let mut digest = [0u8; 16];
        digest.copy_from_slice(&hasher.finalize().as_bytes()[..16]);
        Self(digest)
    }

    /// The one identity of every request that no source identifies.
    pub fn anonymous() -> Self {
        Self::of("anonymous", b"")
    }

    /// The first 64 bits of the digest, uniformly distributed: a ready-made hash.
    pub fn prefix_u64(&self) -> u64 {
        let mut first = [0u8; 8];
        first.copy_from_slice(&self.0[..8]);
        u64::from_le_bytes(first)
    }

    /// The digest as 32 lowercase hex digits, safe to show and to put in store keys.
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Identity({})", &self.hex()[..12])
    }
}

/// The parts of a request that identity sources read.
#[derive(Debug, Clone, Copy)]
pub struct RequestFacts<'a> {
    /// The request's headers.
    pub headers: &'a HeaderMap,
    /// The raw query string, without `?`.
    pub query: Option<&'a str>,
    /// The address of the TCP peer.
    pub peer: Option<IpAddr>,
}

/// One place an identity may come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The value of a request header, such as an API key.
    Header(HeaderName),
    /// The value of a cookie.
    Cookie(String),
    /// The value of a query-string parameter.
    Query(String),
    /// The peer's address, folded to a network prefix.
    Ip,
}

/// A source string from the config that is not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// The kind before `:` is not a known kind.
    #[error(
        "unknown identity source `{0}`; expected header:<name>, cookie:<name>, query:<name> or ip"
    )]
    UnknownKind(String),
    /// The name after `:` is empty or not valid for its kind.
    #[error("identity source `{0}` needs a valid name after `:`")]
    BadName(String),
}

impl std::str::FromStr for Source {
    type Err = SourceError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text == "ip" {
            return Ok(Source::Ip);
        }
        let (kind, name) = text
            .split_once(':')
            .ok_or_else(|| SourceError::UnknownKind(text.to_owned()))?;
        let bad_name = || SourceError::BadName(text.to_owned());
        if name.is_empty() {
            return Err(bad_name());
        }
        match kind {
            "header" => HeaderName::from_bytes(name.as_bytes())
                .map(Source::Header)
                .map_err(|_| bad_name()),
            "cookie" => Ok(Source::Cookie(name.to_owned())),
            "query" => Ok(Source::Query(name.to_owned())),
            _ => Err(SourceError::UnknownKind(text.to_owned())),
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Header(name) => write!(f, "header:{name}"),
            Source::Cookie(name) => write!(f, "cookie:{name}"),
            Source::Query(name) => write!(f, "query:{name}"),
            Source::Ip => f.write_str("ip"),
        }
    }
}

/// How client addresses are grouped: every address in one prefix is one caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpFolding {
    /// Prefix length kept of IPv4 addresses (32 keeps the whole address).
    pub ipv4_prefix: u8,
    /// Prefix length kept of IPv6 addresses (64 groups one customer's network).
    pub ipv6_prefix: u8,
}

impl Default for IpFolding {
    fn default() -> Self {
        Self {
            ipv4_prefix: 32,
            ipv6_prefix: 64,
        }
    }
}

impl IpFolding {
    /// The address's network prefix as bytes: masked octets followed by the prefix length.
    pub fn fold(&self, ip: IpAddr) -> Vec<u8> {
        match ip.to_canonical() {
            IpAddr::V4(v4) => masked(&v4.octets(), self.ipv4_prefix),
            IpAddr::V6(v6) => masked(&v6.octets(), self.ipv6_prefix),
        }
    }
}

fn masked(octets: &[u8], prefix: u8) -> Vec<u8> {
    let mut out: Vec<u8> = octets
        .iter()
        .enumerate()
        .map(|(i, &octet)| {
            let kept_bits = (usize::from(prefix)).saturating_sub(i * 8).min(8);
            let mask = if kept_bits == 0 {
                0
            } else {
                0xffu8 << (8 - kept_bits)
            };
            octet & mask
        })
        .collect();
    out.push(prefix);
    out
}

/// The ordered list of sources and how to read them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityChain {
    /// Sources tried in order; the first that yields a value wins.
    pub sources: Vec<Source>,
    /// How the `ip` source groups addresses.
    pub ip: IpFolding,
}

impl IdentityChain {
    /// The caller of a request with these facts.
    pub fn identify(&self, req: &RequestFacts<'_>) -> Identity {
        self.sources
            .iter()
            .find_map(|source| self.extract(source, req))
            .unwrap_or_else(Identity::anonymous)
    }

    fn extract(&self, source: &Source, req: &RequestFacts<'_>) -> Option<Identity> {
        let tag = source.to_string();
        let value = match source {
            Source::Header(name) => Some(req.headers.get(name)?.as_bytes().to_vec()),
            Source::Cookie(name) => cookie_value(req.headers, name).map(<[u8]>::to_vec),
            Source::Query(name) => query_value(req.query?, name).map(String::into_bytes),
            Source::Ip => Some(self.ip.fold(req.peer?)),
        }?;
        (!value.is_empty()).then(|| Identity::of(&tag, &value))
    }
}

/// The value of cookie `name` in the request's `Cookie` headers (RFC 6265 cookie-string).
fn cookie_value<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a [u8]> {
    headers
        .get_all(COOKIE)
        .iter()
        .flat_map(|header| header.as_bytes().split(|&b| b == b';'))
        .find_map(|pair| {
            let pair = pair.trim_ascii();
            let eq = pair.iter().position(|&b| b == b'=')?;
            let (key, value) = (&pair[..eq], &pair[eq + 1..]);
            (key == name.as_bytes()).then_some(value)
        })
}

/// The first value of parameter `name` in a query string, percent-decoded.
fn query_value(query: &str, name: &str) -> Option<String> {
    form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn chain(sources: &[&str]) -> IdentityChain {
        IdentityChain {
            sources: sources.iter().map(|s| s.parse().unwrap()).collect(),
            ip: IpFolding::default(),
        }
    }

    fn facts<'a>(headers: &'a HeaderMap, query: Option<&'a str>, peer: &str) -> RequestFacts<'a> {
        RequestFacts {
            headers,
            query,
            peer: Some(peer.parse().unwrap()),
        }
    }

    #[test]
    fn the_first_source_with_a_value_wins() {
        let c = chain(&["header:x-api-key", "ip"]);
        let mut headers = HeaderMap::new();
        let by_ip = c.identify(&facts(&headers, None, "10.0.0.1"));
        assert_eq!(by_ip, Identity::of("ip", &[10, 0, 0, 1, 32]));
        headers.insert("x-api-key", HeaderValue::from_static("k1"));
        assert_eq!(
            c.identify(&facts(&headers, None, "10.0.0.1")),
            Identity::of("header:x-api-key", b"k1")
        );
    }

    #[test]
    fn an_empty_value_falls_through() {
        let c = chain(&["header:x-api-key", "ip"]);
        let mut headers = HeaderMap::new();
        headers.insert("x-api-key", HeaderValue::from_static(""));
        let id = c.identify(&facts(&headers, None, "10.0.0.1"));
        assert_eq!(id, Identity::of("ip", &[10, 0, 0, 1, 32]));
    }

    #[test]
    fn unidentified_requests_share_the_anonymous_identity() {
        let c = chain(&["header:x-api-key"]);
        let headers = HeaderMap::new();
        assert_eq!(
            c.identify(&facts(&headers, None, "10.0.0.1")),
            Identity::anonymous()
        );
    }

    #[test]
    fn equal_values_from_different_sources_differ() {
        assert_ne!(
            Identity::of("header:a", b"v"),
            Identity::of("header:b", b"v")
        );
    }

    #[test]
    fn cookies_and_query_parameters_are_read() {
        let c = chain(&["cookie:session", "query:telephone"]);
        let mut headers = HeaderMap::new();
        let q = Some("a=1&telephone=%2B331234");
        let by_query = c.identify(&facts(&headers, q, "10.0.0.1"));
        assert_eq!(by_query, Identity::of("query:telephone", b"+331234"));
        headers.insert(COOKIE, HeaderValue::from_static("theme=dark; session=abc"));
        let by_cookie = c.identify(&facts(&headers, q, "10.0.0.1"));
        assert_eq!(by_cookie, Identity::of("cookie:session", b"abc"));
    }

    #[test]
    fn non_utf8_header_values_are_hashed_as_bytes() {
        let c = chain(&["header:x-api-key"]);
        let mut headers = HeaderMap::new();
        headers.insert("x-api-key", HeaderValue::from_bytes(b"\xff\xfe").unwrap());
        let id = c.identify(&facts(&headers, None, "10.0.0.1"));
        assert_eq!(id, Identity::of("header:x-api-key", b"\xff\xfe"));
    }

    #[test]
    fn ipv6_addresses_of_one_prefix_are_one_caller() {
        let c = chain(&["ip"]);
        let headers = HeaderMap::new();
        let a = c.identify(&facts(&headers, None, "2001:db8:1:2::1"));
        let b = c.identify(&facts(&headers, None, "2001:db8:1:2:ffff::9"));
        let other = c.identify(&facts(&headers, None, "2001:db8:1:3::1"));
        assert_eq!(a, b);
        assert_ne!(a, other);
    }

    #[test]
    fn ipv4_mapped_ipv6_counts_as_ipv4() {
        let c = chain(&["ip"]);
        let headers = HeaderMap::new();
        let mapped = c.identify(&facts(&headers, None, "::ffff:10.0.0.1"));
        assert_eq!(mapped, c.identify(&facts(&headers, None, "10.0.0.1")));
    }

    #[test]
    fn ipv4_prefix_folding_masks_host_bits() {
        let folding = IpFolding {
            ipv4_prefix: 20,
            ipv6_prefix: 64,
        };
        assert_eq!(
            folding.fold("10.1.31.200".parse().unwrap()),
            vec![10, 1, 16, 0, 20]
        );
    }

    #[test]
    fn source_strings_round_trip_and_bad_ones_are_refused() {
        for text in ["header:x-api-key", "cookie:sid", "query:telephone", "ip"] {
            assert_eq!(text.parse::<Source>().unwrap().to_string(), text);
        }
        assert!(matches!(
            "jwt".parse::<Source>(),
            Err(SourceError::UnknownKind(_))
        ));
        assert!(matches!(
            "header:".parse::<Source>(),
            Err(SourceError::BadName(_))
        ));
        assert!(matches!(
            "header:bad name".parse::<Source>(),
            Err(SourceError::BadName(_))
        ));
    }
}
