//! Property tests of the code that reads hostile input: forwarding headers, identity sources
//! (and cookie spellings), bearer tokens, rates, whole config files and request paths. Each
//! runs 256 cases in `scripts/test`; `scripts/fuzz SECONDS` runs them for as long as asked
//! with fresh seeds.

use floodgate::identity::{
    forwarded_hops, ClientIpResolver, ForwardingHeader, Identity, IdentityChain, IdentityKey,
    JwtSettings, JwtVerifier, KeySource, Request,
};
use floodgate::policy::normalize_path;
use floodgate::policy::Rate;
use http::{HeaderMap, HeaderName, HeaderValue};
use proptest::prelude::*;
use std::net::IpAddr;
use std::path::Path;
use std::time::Duration;

/// The key of the identity digests these properties compare.
const KEY: IdentityKey = IdentityKey::from_bytes([3; 32]);

fn header_value(bytes: &[u8]) -> Option<HeaderValue> {
    HeaderValue::from_bytes(bytes).ok()
}

/// Entries an attacker might put in a forwarding header.
fn hop() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<[u8; 4]>().prop_map(|o| std::net::Ipv4Addr::from(o).to_string()),
        any::<[u16; 8]>().prop_map(|s| std::net::Ipv6Addr::from(s).to_string()),
        any::<[u16; 8]>().prop_map(|s| format!("\"[{}]:443\"", std::net::Ipv6Addr::from(s))),
        "[ -~]{0,24}",
        Just("unknown".to_owned()),
    ]
}

fn resolver_of(header: &ForwardingHeader) -> ClientIpResolver {
    let trusted = vec!["10.0.0.0/8".parse().unwrap(), "fd00::/8".parse().unwrap()];
    ClientIpResolver::new(trusted, header.clone())
}

fn resolver() -> ClientIpResolver {
    resolver_of(&ForwardingHeader::default())
}

/// RFC 6265 `cookie-octet`: printable ASCII but space, `"`, `,`, `;` and `\`.
const COOKIE_VALUE: &str = "[!#-+\\--:<-\\[\\]-~]{1,40}";

/// The identity `cookie:sid` reads from a `Cookie` header.
fn cookie_identity(cookie: &str) -> Option<Identity> {
    let chain = IdentityChain::of(vec!["cookie:sid".parse().unwrap()]);
    let mut headers = HeaderMap::new();
    headers.insert(http::header::COOKIE, header_value(cookie.as_bytes())?);
    chain
        .identify(&Request::new(&headers, None, None, None), &KEY)
        .ok()
}

/// A path segment written only with characters a path may hold raw, never `.` or `..`.
fn plain_segment() -> impl Strategy<Value = String> {
    "[A-Za-z0-9._~!$&'()*+,;=:@-]{1,8}".prop_filter("not a dot segment", |s| s != "." && s != "..")
}

/// Request paths built from the pieces that have other spellings.
fn tricky_path() -> impl Strategy<Value = String> {
    let segment = prop_oneof![
        plain_segment(),
        Just(String::new()),
        Just(".".to_owned()),
        Just("..".to_owned()),
        Just("%2e%2E".to_owned()),
        Just("%2f".to_owned()),
        Just("%5C".to_owned()),
        Just("%25".to_owned()),
        Just("é".to_owned()),
        Just("a b".to_owned()),
        "%[0-9a-fA-F]{2}",
        "[a-z%0-9A-F.]{1,6}".prop_filter("whole escapes", |s| normalize_path(&format!("/{s}"))
            .is_ok()),
    ];
    proptest::collection::vec(segment, 0..10).prop_map(|s| format!("/{}", s.join("/")))
}

/// What the normal form never holds.
fn check_normal(path: &str) -> Result<(), TestCaseError> {
    prop_assert!(path.starts_with('/'), "{}", path);
    for spelling in ["//", "/./", "/../"] {
        prop_assert!(!path.contains(spelling), "{} holds {}", path, spelling);
    }
    prop_assert!(!path.ends_with("/.") && !path.ends_with("/.."), "{}", path);
    let bytes = path.as_bytes();
    for (i, _) in path.match_indices('%') {
        let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
        prop_assert_eq!(hex.to_ascii_uppercase(), hex, "uppercase hex in {}", path);
        let byte = u8::from_str_radix(hex, 16).unwrap();
        let unreserved = byte.is_ascii_alphanumeric() || b"-._~".contains(&byte);
        prop_assert!(
            !unreserved,
            "{} encodes an unreserved {}",
            path,
            byte as char
        );
    }
    Ok(())
}

proptest! {
    #[test]
    fn forwarding_headers_never_panic_and_name_only_what_they_hold(
        xff in proptest::collection::vec(any::<u8>(), 0..300),
        fwd in proptest::collection::vec(any::<u8>(), 0..300),
        peer in any::<[u8; 4]>(),
    ) {
        let mut headers = HeaderMap::new();
        if let Some(v) = header_value(&xff) { headers.insert("x-forwarded-for", v); }
        if let Some(v) = header_value(&fwd) { headers.insert("forwarded", v); }
        let peer = IpAddr::from(peer);
        for header in [ForwardingHeader::default(), ForwardingHeader::Forwarded] {
            let hops = forwarded_hops(&headers, &header);
            let client = resolver_of(&header).resolve(Some(peer), &headers).unwrap();
            prop_assert!(client == peer || hops.contains(&Some(client)));
            if !peer.to_string().starts_with("10.") {
                prop_assert_eq!(client, peer, "an untrusted peer is the client");
            }
        }
    }

    #[test]
    fn entries_left_of_the_real_client_change_nothing(
        forged in proptest::collection::vec(hop(), 0..8),
        client in any::<[u8; 4]>().prop_filter("untrusted", |o| o[0] != 10),
        proxies in 0usize..3,
    ) {
        let client = IpAddr::from(client);
        let mut chain: Vec<String> = forged.into_iter().filter(|h| !h.contains(',')).collect();
        chain.push(client.to_string());
        chain.extend((0..proxies).map(|i| format!("10.0.0.{i}")));
        let mut headers = HeaderMap::new();
        if let Some(v) = header_value(chain.join(", ").as_bytes()) {
            headers.insert("x-forwarded-for", v);
            let peer: IpAddr = "10.9.9.9".parse().unwrap();
            prop_assert_eq!(resolver().resolve(Some(peer), &headers), Some(client));
        }
    }

    #[test]
    fn identity_extraction_never_panics_and_is_deterministic(
        key in proptest::collection::vec(any::<u8>(), 0..5000),
        cookie in proptest::collection::vec(any::<u8>(), 0..200),
        query in "[ -~]{0,200}",
        auth in "[ -~]{0,200}",
    ) {
        let chain = IdentityChain::of(
            ["jwt:sub", "header:x-api-key+ip", "cookie:sid", "query:phone", "ip"]
                .iter().map(|s| s.parse().unwrap()).collect(),
        );
        let mut headers = HeaderMap::new();
        if let Some(v) = header_value(&key) { headers.insert(HeaderName::from_static("x-api-key"), v); }
        if let Some(v) = header_value(&cookie) { headers.insert(http::header::COOKIE, v); }
        if let Some(v) = header_value(auth.as_bytes()) { headers.insert(http::header::AUTHORIZATION, v); }
        let ip = Some("192.0.2.1".parse().unwrap());
        let first = chain.identify(&Request::new(&headers, Some(&query), ip, None), &KEY);
        let second = chain.identify(&Request::new(&headers, Some(&query), ip, None), &KEY);
        prop_assert_eq!(first, second);
    }

    #[test]
    fn garbage_tokens_never_verify(token in "[ -~]{0,400}") {
        let verifier = JwtVerifier::new(&JwtSettings {
            algorithms: vec![jsonwebtoken::Algorithm::HS256],
            keys: KeySource::Secret(b"property-test-secret-0123456789abcdef".to_vec()),
            issuer: None,
            audience: None,
            leeway: Duration::from_secs(0),
        }).unwrap();
        prop_assert!(verifier.verify(&token).is_err());
    }

    #[test]
    fn rates_parse_or_refuse_without_panicking(text in "[ -~]{0,20}") {
        if let Ok(rate) = text.parse::<Rate>() {
            prop_assert!(rate.per_second() > 0.0 && rate.per_second().is_finite());
        }
    }

    #[test]
    fn config_text_never_panics_the_loader(text in "[ -~\n]{0,400}") {
        let _ = floodgate::config::parse(&text, Path::new("fuzz.toml"));
    }

    #[test]
    fn mutated_configs_never_panic_the_loader(position in 0usize..600, junk in "[ -~\n]{0,12}") {
        let base = include_str!("../../conf/example.toml");
        let at = base.char_indices().map(|(i, _)| i).nth(position % base.len()).unwrap_or(0);
        let mutated = format!("{}{}{}", &base[..at], junk, &base[at..]);
        match floodgate::config::parse(&mutated, Path::new("fuzz.toml")) {
            Ok(_) => {}
            Err(e) => prop_assert!(e.to_string().starts_with("fuzz.toml:"), "{}", e),
        }
    }

    #[test]
    fn cookie_spellings_are_one_identity(value in COOKIE_VALUE) {
        let plain = cookie_identity(&format!("sid={value}"));
        prop_assert_eq!(plain, Some(Identity::of(&KEY, "cookie:sid", value.as_bytes())));
        for spelling in [
            format!("sid= {value} "),
            format!("sid=\"{value}\""),
            format!("a=1; sid =\t{value}; b=2"),
            format!("a=1;sid= \"{value}\" ;b=2"),
        ] {
            prop_assert_eq!(cookie_identity(&spelling), plain, "{}", spelling);
        }
    }

    #[test]
    fn path_normalization_is_idempotent_and_leaves_one_spelling(path in tricky_path()) {
        let normal = normalize_path(&path).unwrap();
        check_normal(&normal)?;
        let again = normalize_path(&normal).unwrap();
        prop_assert!(matches!(again, std::borrow::Cow::Borrowed(_)), "{} is borrowed", normal);
        prop_assert_eq!(&again, &normal);
    }

    #[test]
    fn respelling_a_path_does_not_change_its_normal_form(
        segments in proptest::collection::vec((plain_segment(), any::<u64>(), 0u8..5), 1..8),
    ) {
        let plain = format!("/{}", segments.iter().map(|(s, ..)| s.as_str()).collect::<Vec<_>>().join("/"));
        let respelled: String = segments.iter().map(|(segment, mask, decoration)| {
            let encoded: String = segment.chars().enumerate().map(|(i, c)| {
                let unreserved = c.is_ascii_alphanumeric() || "-._~".contains(c);
                match (unreserved, (mask >> (i % 64)) & 1 == 1, i % 2 == 0) {
                    (true, true, true) => format!("%{:02x}", c as u8),
                    (true, true, false) => format!("%{:02X}", c as u8),
                    _ => c.to_string(),
                }
            }).collect();
            match decoration {
                0 => format!("/{encoded}"),
                1 => format!("//{encoded}"),
                2 => format!("/./{encoded}"),
                3 => format!("/x%2Fy/../{encoded}"),
                _ => format!("/%2e/{encoded}"),
            }
        }).collect();
        prop_assert_eq!(normalize_path(&respelled).unwrap(), normalize_path(&plain).unwrap());
    }

    #[test]
    fn any_path_normalizes_or_is_refused_without_panicking(
        path in prop_oneof!["/[ -~]{0,60}", "[ -~]{0,20}", "/\\PC{0,30}", any::<String>()],
    ) {
        if let Ok(normal) = normalize_path(&path) {
            if normal != "*" {
                check_normal(&normal)?;
            }
            prop_assert_eq!(normalize_path(&normal).unwrap(), normal.clone());
        }
    }
}
