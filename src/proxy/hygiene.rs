//! What a request must be before the gate sees it: an HTTP/1.1 request names its host, and
//! its path is rewritten to its normal form ([`normalize_path`]).
//!
//! The normal path is what policies match *and* what is forwarded (the query is kept as
//! sent): `//sendCaptcha`, `/%73endCaptcha` and `/a/../sendCaptcha` all reach the backend as
//! `/sendCaptcha`, so the route the limiter saw is the resource the backend serves. A path
//! with no normal form (a raw `\`, a bad `%`, not starting with `/`) gets 400.

use crate::policy::normalize_path;
use http::{header::HOST, Uri, Version};
use pingora::http::RequestHeader;
use pingora::{Error, ErrorType, Result};
use std::borrow::Cow;

/// A 400 whose problem body says `why`.
fn bad_request(why: String) -> Box<Error> {
    Error::explain(ErrorType::HTTPStatus(400), why)
}

/// Refuses an HTTP/1.1 request without `Host` (RFC 9112 §3.2: the server must answer 400);
/// a request without a host would also skip every `host = …` policy.
pub(super) fn require_host(req: &RequestHeader) -> Result<()> {
    if req.version == Version::HTTP_11 && !req.headers.contains_key(HOST) {
        return Err(bad_request(
            "An HTTP/1.1 request must have a Host header.".into(),
        ));
    }
    Ok(())
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
    fn http11_needs_a_host_and_http10_does_not() {
        let mut req = RequestHeader::build("GET", b"/", None).unwrap();
        assert!(require_host(&req).is_err());
        req.set_version(Version::HTTP_10);
        assert!(require_host(&req).is_ok());
        assert!(require_host(&request("/")).is_ok());
    }
}
