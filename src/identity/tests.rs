//! Identity extraction: sources, fallbacks, composites, folding, tokens.

use super::*;
use http::HeaderValue;

const KEY: IdentityKey = IdentityKey::from_bytes([7; 32]);

fn chain(sources: &[&str]) -> IdentityChain {
    IdentityChain::of(sources.iter().map(|s| s.parse().unwrap()).collect())
}

fn request<'a>(headers: &'a HeaderMap, query: Option<&'a str>, ip: &str) -> Request<'a> {
    Request::new(headers, query, Some(ip.parse().unwrap()), None)
}

fn identify(c: &IdentityChain, headers: &HeaderMap, query: Option<&str>, ip: &str) -> Identity {
    c.identify(&request(headers, query, ip), &KEY).unwrap()
}

#[test]
fn the_first_source_with_a_value_wins() {
    let c = chain(&["header:x-api-key", "ip"]);
    let mut headers = HeaderMap::new();
    assert_eq!(
        identify(&c, &headers, None, "10.0.0.1"),
        Identity::of(&KEY, "ip", &[10, 0, 0, 1, 32])
    );
    headers.insert("x-api-key", HeaderValue::from_static("k1"));
    assert_eq!(
        identify(&c, &headers, None, "10.0.0.1"),
        Identity::of(&KEY, "header:x-api-key", b"k1")
    );
}

#[test]
fn empty_and_oversized_values_fall_through() {
    let c = chain(&["header:x-api-key", "ip"]);
    let by_ip = Identity::of(&KEY, "ip", &[10, 0, 0, 1, 32]);
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
        Identity::anonymous(&KEY)
    );
}

#[test]
fn equal_values_from_different_sources_differ() {
    assert_ne!(
        Identity::of(&KEY, "header:a", b"v"),
        Identity::of(&KEY, "header:b", b"v")
    );
}

#[test]
fn cookies_and_query_parameters_are_read() {
    let c = chain(&["cookie:session", "query:telephone"]);
    let mut headers = HeaderMap::new();
    let q = Some("a=1&telephone=%2B331234");
    assert_eq!(
        identify(&c, &headers, q, "10.0.0.1"),
        Identity::of(&KEY, "query:telephone", b"+331234")
    );
    headers.insert(
        http::header::COOKIE,
        HeaderValue::from_static("theme=dark; session=abc"),
    );
    assert_eq!(
        identify(&c, &headers, q, "10.0.0.1"),
        Identity::of(&KEY, "cookie:session", b"abc")
    );
}

#[test]
fn composite_sources_need_every_part() {
    let c = chain(&["header:x-tenant+ip", "ip"]);
    let mut headers = HeaderMap::new();
    let alone = identify(&c, &headers, None, "10.0.0.1");
    assert_eq!(alone, Identity::of(&KEY, "ip", &[10, 0, 0, 1, 32]));
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
        Identity::of(&KEY, "header:x-api-key", b"\xff\xfe")
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
        c.identify(&req, &KEY),
        Err(IdentityError::InvalidToken(_))
    ));
    c.on_invalid_token = OnInvalidToken::Next;
    assert_eq!(
        c.identify(&req, &KEY).unwrap(),
        Identity::of(&KEY, "ip", &[10, 0, 0, 1, 32])
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

#[test]
fn digests_depend_on_the_key() {
    let other = IdentityKey::from_bytes([8; 32]);
    assert_ne!(
        Identity::of(&KEY, "ip", b"x"),
        Identity::of(&other, "ip", b"x")
    );
    assert_ne!(Identity::anonymous(&KEY), Identity::anonymous(&other));
}
