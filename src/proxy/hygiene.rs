//! What a request must be before the gate sees it: it names one valid host, and its path is
//! rewritten to its normal form ([`normalize_path`]).
//!
//! **Host.** A request's host is an absolute-form target's authority (RFC 9112 §3.2.2), else
//! its `Host` header, else the HTTP/2 `:authority`. Whatever the version (HTTP/1.0 included),
//! a request that names none, or whose host is empty or not a `host[:port]`, gets 400: a
//! request without a usable host would skip every `host = …` policy and route. An
//! absolute-form target without `Host` gets the target's authority as its `Host`, so the
//! policies see the host the backend serves. (Pingora already refuses a second `Host`, a
//! `Host` that differs from the target's authority and userinfo.)
//!
//! **Path.** The normal path is what policies match *and* what is forwarded (the query is
//! kept as sent): `//sendCaptcha`, `/%73endCaptcha` and `/a/../sendCaptcha` all reach the
//! backend as `/sendCaptcha`, so the route the limiter saw is the resource the backend
//! serves. A path with no normal form (a raw `\`, a bad `%`, not starting with `/`) gets 400.

use crate::policy::normalize_path;
use http::header::HOST;
use http::uri::Authority;
use http::{HeaderValue, Uri};
use pingora::http::RequestHeader;
use pingora::protocols::http::authority::raw_target_authority;
use pingora::{Error, ErrorType, Result};
use std::borrow::Cow;

/// A 400 whose problem body says `why`.
fn bad_request(why: String) -> Box<Error> {
    Error::explain(ErrorType::HTTPStatus(400), why)
}

/// What a request that names no host is told.
const NO_HOST: &str = "A request must name its host: a Host header (or :authority in HTTP/2).";
/// What a request whose host is not one is told.
const BAD_HOST: &str = "The Host header is not a valid host.";

/// Refuses a request that names no usable host (see the module's rule), on any version;
/// gives an absolute-form target without `Host` the target's authority as its `Host`.
pub(super) fn require_host(req: &mut RequestHeader) -> Result<()> {
    if req.headers.get_all(HOST).iter().nth(1).is_some() {
        return Err(bad_request("A request must have one Host header.".into()));
    }
    let header = req.headers.get(HOST);
    let target = raw_target_authority(req.raw_path()).authority();
    let authority = req.uri.authority().map(|a| a.as_str().as_bytes());
    let Some(host) = target.or(header.map(HeaderValue::as_bytes)).or(authority) else {
        return Err(bad_request(NO_HOST.into()));
    };
    if !is_host(host) {
        return Err(bad_request(BAD_HOST.into()));
    }
    let missing = match (target, header) {
        (Some(target), None) => {
            Some(HeaderValue::from_bytes(target).map_err(|_| bad_request(BAD_HOST.into()))?)
        }
        _ => None,
    };
    if let Some(value) = missing {
        req.insert_header(HOST, value)?;
    }
    Ok(())
}

/// Whether `value` is a `host[:port]` (RFC 9110 §7.2): a non-empty host, a port of digits,
/// no userinfo.
fn is_host(value: &[u8]) -> bool {
    let Ok(authority) = Authority::try_from(value) else {
        return false;
    };
    let (text, host) = (authority.as_str(), authority.host());
    if text.contains('@') || host.trim_end_matches('.').is_empty() {
        return false;
    }
    let port = text.get(host.len()..).unwrap_or_default();
    port.is_empty() || port.strip_prefix(':').is_some_and(all_digits)
}

/// Whether every character of `text` is an ASCII digit.
fn all_digits(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_digit())
}

/// Rewrites the request's target to its normal path, keeping the query; refuses a path that
/// has no normal form.
pub(super) fn normalize_target(req: &mut RequestHeader) -> Result<()> {
    let normal = match normalize_path(req.uri.path()) {
        Ok(Cow::Borrowed(_)) => return Ok(()),
        Ok(Cow::Owned(normal)) => normal,
        Err(e) => return Err(bad_request(format!("The request path is not valid: {e}."))),
    };
    let target = match req.uri.query() {
        Some(query) => format!("{normal}?{query}"),
        None => normal,
    };
    let uri = Uri::try_from(target)
        .map_err(|_| bad_request("The request target is not valid.".into()))?;
    req.set_uri(uri);
    Ok(())
}

#[cfg(test)]
mod tests {
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
}
