//! The request rules against requests built here.

use super::*;

fn request(target: &str) -> RequestHeader {
    let mut req = RequestHeader::build("GET", target.as_bytes(), None).unwrap();
    req.insert_header("host", "example.com").unwrap();
    req
}

#[test]
fn the_target_is_rewritten_to_the_normal_path_and_keeps_its_query() {
    let mut req = request("/a/..//%73endCaptcha?to=%2B33&x=1");
    normalize_target(&mut req).unwrap();
    assert_eq!(req.uri.path(), "/sendCaptcha");
    assert_eq!(req.uri.query(), Some("to=%2B33&x=1"));
    assert_eq!(req.raw_path(), b"/sendCaptcha?to=%2B33&x=1");
}

#[test]
fn a_normal_target_is_left_alone() {
    let mut req = request("/sendCaptcha?x=%2f");
    normalize_target(&mut req).unwrap();
    assert_eq!(req.raw_path(), b"/sendCaptcha?x=%2f");
}

#[test]
fn a_path_without_a_normal_form_is_a_400() {
    let mut req = request("/a%zz");
    let e = normalize_target(&mut req).unwrap_err();
    assert_eq!(e.etype(), &ErrorType::HTTPStatus(400));
}

#[test]
fn every_version_needs_a_valid_host() {
    let mut req = RequestHeader::build("GET", b"/", None).unwrap();
    assert!(require_host(&mut req).is_err());
    req.set_version(http::Version::HTTP_10);
    assert!(require_host(&mut req).is_err(), "HTTP/1.0 too");
    for bad in ["", " ", ":80", ".", "a b", "u@example.com", "example.com:x"] {
        let mut req = RequestHeader::build("GET", b"/", None).unwrap();
        req.insert_header("host", bad).unwrap();
        let e = require_host(&mut req).err();
        assert_eq!(
            e.map(|e| e.etype().clone()),
            Some(ErrorType::HTTPStatus(400)),
            "{bad:?}"
        );
    }
    for good in [
        "example.com",
        "Example.COM:8080",
        "[::1]:80",
        "10.0.0.1",
        "localhost.",
    ] {
        let mut req = RequestHeader::build("GET", b"/", None).unwrap();
        req.insert_header("host", good).unwrap();
        assert!(require_host(&mut req).is_ok(), "{good:?}");
    }
}

#[test]
fn the_plain_host_check_agrees_with_the_parse() {
    let samples = [
        "example.com",
        "a-b.example:8080",
        "10.0.0.1:",
        "localhost.",
        ".",
        "..",
        "",
        ":80",
        "a:b",
        "a:80:90",
        "a b",
        "u@x",
        "[::1]:80",
        "ex%41mple",
        "x_y.com",
        "99999:99999",
    ];
    for sample in samples {
        let value = sample.as_bytes();
        if is_plain_host(value) {
            assert!(is_parsed_host(value), "{sample:?}");
        }
    }
    assert!(is_plain_host(b"Example.COM:8080") && !is_plain_host(b"[::1]:80"));
}

#[test]
fn two_hosts_are_a_400() {
    let mut req = request("/");
    req.append_header("host", "other.example.com").unwrap();
    assert!(require_host(&mut req).is_err());
}

#[test]
fn an_absolute_target_names_the_host_and_becomes_the_host_header() {
    let mut req = RequestHeader::build("GET", b"http://api.example.com/x", None).unwrap();
    req.set_version(http::Version::HTTP_10);
    require_host(&mut req).unwrap();
    assert_eq!(req.headers.get("host").unwrap(), "api.example.com");
}

#[test]
fn an_http2_authority_names_the_host() {
    let mut req = RequestHeader::build("GET", b"/", None).unwrap();
    req.set_version(http::Version::HTTP_2);
    req.set_uri(Uri::from_static("https://api.example.com/"));
    assert!(require_host(&mut req).is_ok());
    assert!(req.headers.get("host").is_none(), "left as it came");
}

#[test]
fn the_asterisk_target_is_for_options_only() {
    let guard = HeaderGuard::new(&[], &[]);
    for method in ["GET", "POST", "HEAD"] {
        let mut req = RequestHeader::build(method, b"*", None).unwrap();
        req.insert_header("host", "example.com").unwrap();
        let e = check(&mut req, &guard).unwrap_err();
        assert_eq!(e.etype(), &ErrorType::HTTPStatus(400), "{method}");
    }
    let mut req = RequestHeader::build("OPTIONS", b"*", None).unwrap();
    req.insert_header("host", "example.com").unwrap();
    check(&mut req, &guard).unwrap();
    assert!(is_asterisk(&req));
    assert!(!is_asterisk(&request("/*")));
}

#[test]
fn a_repeated_decided_header_is_a_400() {
    let guard = HeaderGuard::new(&[], &[]);
    let mut req = request("/");
    req.append_header("user-agent", "curl/8").unwrap();
    check(&mut req, &guard).unwrap();
    req.append_header("user-agent", "Mozilla/5.0 Chrome/156")
        .unwrap();
    let e = check(&mut req, &guard).unwrap_err();
    assert_eq!(e.etype(), &ErrorType::HTTPStatus(400));
    assert!(repeated(&req.headers, &http::header::USER_AGENT));
    assert!(!repeated(&req.headers, &HOST));
}

#[test]
fn underscore_spellings_are_the_same_name_with_a_dash_written_underscore() {
    assert!(is_underscore_spelling("x_api_key", "x-api-key"));
    assert!(is_underscore_spelling("X_Api-Key", "x-api-key"));
    assert!(
        !is_underscore_spelling("x-api-key", "x-api-key"),
        "the name itself"
    );
    assert!(!is_underscore_spelling("x_api_keys", "x-api-key"));
    assert!(
        !is_underscore_spelling("x_api_key", "x_api_key"),
        "no dash to spell"
    );
    assert!(!is_underscore_spelling("x.api_key", "x-api-key"));
}
