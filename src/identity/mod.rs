//! Who is calling: a request's facts → an [`Identity`], from an ordered list of sources.
//!
//! The first source that yields a non-empty value wins. The value never leaves this module in
//! the clear: it is hashed (BLAKE3, with the source's name as a prefix so that equal values from
//! different sources stay apart) into a 128-bit digest, which is what stores, logs and the
//! offenders view see. A request no source identifies shares one `anonymous` identity, so
//! dropping every identifying header earns no fresh bucket.

mod client_ip;
mod jwt;
mod source;

pub use client_ip::{forwarded_hops, ClientIpResolver};
pub use jwt::{Claims, JwtConfigError, JwtSettings, JwtVerifier, KeySource, TokenError};
pub use source::{IpFolding, Source, SourceError, SourceSpec, MAX_VALUE_LEN};

use http::header::{HeaderMap, AUTHORIZATION};
use std::fmt;
use std::net::IpAddr;
use std::sync::OnceLock;

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
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = String::with_capacity(32);
        for b in self.0 {
            out.push(DIGITS[usize::from(b >> 4)] as char);
            out.push(DIGITS[usize::from(b & 0xf)] as char);
        }
        out
    }
}

impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Identity({})", &self.hex()[..12])
    }
}

/// The bearer token of a request, verified at most once.
#[derive(Debug)]
pub enum TokenState {
    /// No `Authorization: Bearer` header.
    Absent,
    /// A token was presented and did not verify.
    Invalid(TokenError),
    /// A verified token's claims.
    Valid(Claims),
}

/// The parts of a request that identity sources read.
pub struct Request<'a> {
    /// The request's headers.
    pub headers: &'a HeaderMap,
    /// The raw query string, without `?`.
    pub query: Option<&'a str>,
    /// The client address (the peer, or the nearest untrusted forwarded hop).
    pub client_ip: Option<IpAddr>,
    verifier: Option<&'a JwtVerifier>,
    token: OnceLock<TokenState>,
}

impl<'a> Request<'a> {
    /// The facts of one request; `verifier` checks its bearer token if a source needs it.
    pub fn new(
        headers: &'a HeaderMap,
        query: Option<&'a str>,
        client_ip: Option<IpAddr>,
        verifier: Option<&'a JwtVerifier>,
    ) -> Self {
        Self {
            headers,
            query,
            client_ip,
            verifier,
            token: OnceLock::new(),
        }
    }

    /// The bearer token, verified on first use.
    pub fn token(&self) -> &TokenState {
        self.token.get_or_init(|| {
            let Some(token) = bearer_token(self.headers) else {
                return TokenState::Absent;
            };
            match self.verifier {
                None => TokenState::Invalid(TokenError::UnknownKey),
                Some(verifier) => match verifier.verify(token) {
                    Ok(claims) => TokenState::Valid(claims),
                    Err(e) => TokenState::Invalid(e),
                },
            }
        })
    }
}

/// The token of an `Authorization: Bearer <token>` header, if there is one.
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// What a chain does with a bearer token that is present but does not verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnInvalidToken {
    /// Answer 401.
    Reject,
    /// Ignore the token and try the next source.
    Next,
}

/// Why a request could not be identified.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    /// A bearer token was presented and did not verify.
    #[error("{0}")]
    InvalidToken(TokenError),
}

/// The ordered list of sources and how to read them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityChain {
    /// Sources tried in order; the first that yields a value wins.
    pub sources: Vec<SourceSpec>,
    /// How the `ip` source groups addresses.
    pub ip: IpFolding,
    /// What an invalid bearer token earns.
    pub on_invalid_token: OnInvalidToken,
}

impl IdentityChain {
    /// A chain of `sources` with default folding that rejects invalid tokens.
    pub fn of(sources: Vec<SourceSpec>) -> Self {
        Self {
            sources,
            ip: IpFolding::default(),
            on_invalid_token: OnInvalidToken::Reject,
        }
    }

    /// The caller of `req`.
    pub fn identify(&self, req: &Request<'_>) -> Result<Identity, IdentityError> {
        for spec in &self.sources {
            match spec.value(req, &self.ip) {
                Ok(Some(value)) => return Ok(Identity::of(spec.tag(), &value)),
                Ok(None) => {}
                Err(e) if self.on_invalid_token == OnInvalidToken::Reject => {
                    return Err(IdentityError::InvalidToken(e));
                }
                Err(_) => {}
            }
        }
        Ok(Identity::anonymous())
    }

    /// Whether any source reads the bearer token.
    pub fn uses_jwt(&self) -> bool {
        self.sources.iter().any(SourceSpec::uses_jwt)
    }
}

impl fmt::Display for IdentityChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sources: Vec<String> = self.sources.iter().map(|s| s.to_string()).collect();
        write!(f, "{} → anonymous", sources.join(" → "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn chain(sources: &[&str]) -> IdentityChain {
        IdentityChain::of(sources.iter().map(|s| s.parse().unwrap()).collect())
    }

    fn request<'a>(headers: &'a HeaderMap, query: Option<&'a str>, ip: &str) -> Request<'a> {
        Request::new(headers, query, Some(ip.parse().unwrap()), None)
    }

    fn identify(c: &IdentityChain, headers: &HeaderMap, query: Option<&str>, ip: &str) -> Identity {
        c.identify(&request(headers, query, ip)).unwrap()
    }

    #[test]
    fn the_first_source_with_a_value_wins() {
        let c = chain(&["header:x-api-key", "ip"]);
        let mut headers = HeaderMap::new();
        assert_eq!(
            identify(&c, &headers, None, "10.0.0.1"),
            Identity::of("ip", &[10, 0, 0, 1, 32])
        );
        headers.insert("x-api-key", HeaderValue::from_static("k1"));
        assert_eq!(
            identify(&c, &headers, None, "10.0.0.1"),
            Identity::of("header:x-api-key", b"k1")
        );
    }

    #[test]
    fn empty_and_oversized_values_fall_through() {
        let c = chain(&["header:x-api-key", "ip"]);
        let by_ip = Identity::of("ip", &[10, 0, 0, 1, 32]);
        let mut headers = HeaderMap::new();
        headers.insert("x-api-key", HeaderValue::from_static(""));
        assert_eq!(identify(&c, &headers, None, "10.0.0.1"), by_ip);
        let huge = "k".repeat(MAX_VALUE_LEN + 1);
        headers.insert("x-api-key", HeaderValue::from_str(&huge).unwrap());
        assert_eq!(identify(&c, &headers, None, "10.0.0.1"), by_ip);
    }

    #[test]
    fn unidentified_requests_share_the_anonymous_identity() {
        let c = chain(&["header:x-api-key"]);
        assert_eq!(
            identify(&c, &HeaderMap::new(), None, "10.0.0.1"),
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
        assert_eq!(
            identify(&c, &headers, q, "10.0.0.1"),
            Identity::of("query:telephone", b"+331234")
        );
        headers.insert(
            http::header::COOKIE,
            HeaderValue::from_static("theme=dark; session=abc"),
        );
        assert_eq!(
            identify(&c, &headers, q, "10.0.0.1"),
            Identity::of("cookie:session", b"abc")
        );
    }

    #[test]
    fn composite_sources_need_every_part() {
        let c = chain(&["header:x-tenant+ip", "ip"]);
        let mut headers = HeaderMap::new();
        let alone = identify(&c, &headers, None, "10.0.0.1");
        assert_eq!(alone, Identity::of("ip", &[10, 0, 0, 1, 32]));
        headers.insert("x-tenant", HeaderValue::from_static("acme"));
        let a = identify(&c, &headers, None, "10.0.0.1");
        let b = identify(&c, &headers, None, "10.0.0.2");
        assert_ne!(a, b);
        assert_ne!(a, alone);
    }

    #[test]
    fn non_utf8_header_values_are_hashed_as_bytes() {
        let c = chain(&["header:x-api-key"]);
        let mut headers = HeaderMap::new();
        headers.insert("x-api-key", HeaderValue::from_bytes(b"\xff\xfe").unwrap());
        assert_eq!(
            identify(&c, &headers, None, "10.0.0.1"),
            Identity::of("header:x-api-key", b"\xff\xfe")
        );
    }

    #[test]
    fn ipv6_addresses_of_one_prefix_are_one_caller() {
        let c = chain(&["ip"]);
        let h = HeaderMap::new();
        let a = identify(&c, &h, None, "2001:db8:1:2::1");
        assert_eq!(a, identify(&c, &h, None, "2001:db8:1:2:ffff::9"));
        assert_ne!(a, identify(&c, &h, None, "2001:db8:1:3::1"));
        assert_eq!(
            identify(&c, &h, None, "::ffff:10.0.0.1"),
            identify(&c, &h, None, "10.0.0.1")
        );
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
    fn a_bad_token_is_rejected_or_skipped_as_configured() {
        let mut c = chain(&["jwt:sub", "ip"]);
        let mut headers = HeaderMap::new();
        headers.insert(
            AUTHORIZATION,
            HeaderValue::from_static("Bearer not.a.token"),
        );
        let req = request(&headers, None, "10.0.0.1");
        assert!(matches!(
            c.identify(&req),
            Err(IdentityError::InvalidToken(_))
        ));
        c.on_invalid_token = OnInvalidToken::Next;
        assert_eq!(
            c.identify(&req).unwrap(),
            Identity::of("ip", &[10, 0, 0, 1, 32])
        );
        headers.insert(
            AUTHORIZATION,
            HeaderValue::from_static("Basic dXNlcjpwYXNz"),
        );
        let basic = request(&headers, None, "10.0.0.1");
        assert!(
            matches!(basic.token(), TokenState::Absent),
            "other schemes are no token"
        );
    }

    #[test]
    fn source_strings_round_trip_and_bad_ones_are_refused() {
        for text in [
            "header:x-api-key",
            "cookie:sid",
            "query:telephone",
            "jwt:sub",
            "ip",
            "header:x-t+ip",
        ] {
            assert_eq!(text.parse::<SourceSpec>().unwrap().to_string(), text);
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
        assert!("ip+".parse::<SourceSpec>().is_err());
    }
}
