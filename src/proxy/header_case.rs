//! Header-name case on HTTP/1. By default the proxy forwards header names the way HTTP/2
//! carries them, lowercase (pingora's writer titles a few common ones: `Host`,
//! `Content-Type`, `Content-Length`, `Date`, `Server`, …), as Envoy and HAProxy do; names are
//! case-insensitive (RFC 9110 §5.1). `server.preserve_header_case = true` keeps each name as
//! its sender spelled it, for the rare application that reads names case-sensitively.
//!
//! Dropping pingora's case map is also what makes the headers the proxy adds cheap: pingora
//! 0.9 keeps case in a second map, so each added or removed header touches two maps, parses and
//! copies its name and grows both (no reserve is offered). Here the proxy's changes (`edits`)
//! go straight into the one map while the message is taken apart.

use http::request::Parts as RequestParts;
use http::response::Parts as ResponseParts;
use http::HeaderMap;
use pingora::http::{RequestHeader, ResponseHeader};
use pingora::Result;

/// Drops `req`'s header-name case, changing its headers with `edit` on the way. The request
/// target (absolute-form, or bytes that are not UTF-8) and HTTP/2's end-of-stream flag are kept.
pub(super) fn shed_request(
    req: &mut RequestHeader,
    edit: impl FnOnce(&mut HeaderMap),
) -> Result<()> {
    let verbatim = (req.raw_path() != target_from_uri(&req.uri)).then(|| req.raw_path().to_vec());
    let end_stream = req.send_end_stream();
    let empty = RequestHeader::from(http::Request::new(()).into_parts().0);
    let mut parts = RequestParts::from(std::mem::replace(req, empty));
    edit(&mut parts.headers);
    *req = RequestHeader::from(parts);
    if let Some(target) = verbatim {
        req.set_raw_path(&target)?;
    }
    if let Some(end_stream) = end_stream {
        req.set_send_end_stream(end_stream);
    }
    Ok(())
}

/// Drops `resp`'s header-name case, changing its headers with `edit` on the way; a reason phrase
/// other than the status's usual one is kept.
pub(super) fn shed_response(
    resp: &mut ResponseHeader,
    edit: impl FnOnce(&mut HeaderMap),
) -> Result<()> {
    let reason = resp.get_reason_phrase();
    let custom = (reason != resp.status.canonical_reason()).then(|| reason.map(str::to_owned));
    let empty = ResponseHeader::from(http::Response::new(()).into_parts().0);
    let mut parts = ResponseParts::from(std::mem::replace(resp, empty));
    edit(&mut parts.headers);
    *resp = ResponseHeader::from(parts);
    if let Some(reason) = custom {
        resp.set_reason_phrase(reason.as_deref())?;
    }
    Ok(())
}

/// The target pingora writes for a header built from `uri` alone.
fn target_from_uri(uri: &http::Uri) -> &[u8] {
    uri.path_and_query()
        .map(|p| p.as_str())
        .or_else(|| uri.authority().map(|a| a.as_str()))
        .unwrap_or_default()
        .as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire(req: &RequestHeader) -> String {
        let mut buf = Vec::new();
        req.header_to_h1_wire(&mut buf);
        String::from_utf8(buf).expect("text")
    }

    #[test]
    fn a_request_keeps_its_headers_target_and_order_in_lowercase() {
        let mut req = RequestHeader::build("GET", b"/a?b=c", None).unwrap();
        req.append_header("Host", "example.com").unwrap();
        req.append_header("X-Api-Key", "k1").unwrap();
        req.append_header("X-Api-Key", "k2").unwrap();
        shed_request(&mut req, |headers| {
            headers.insert("x-forwarded-proto", http::HeaderValue::from_static("http"));
        })
        .unwrap();
        assert!(!req.has_case());
        assert_eq!(req.raw_path(), b"/a?b=c");
        assert_eq!(
            wire(&req),
            "Host: example.com\r\nx-api-key: k1\r\nx-api-key: k2\r\nx-forwarded-proto: http\r\n"
        );
    }

    #[test]
    fn an_absolute_or_non_utf8_target_survives() {
        for target in [&b"http://example.com/x?y"[..], b"/caf\xe9"] {
            let mut req = RequestHeader::build("GET", target, None).unwrap();
            let utf8 = req.raw_path_is_utf8();
            shed_request(&mut req, |_| {}).unwrap();
            assert_eq!(req.raw_path(), target);
            assert_eq!(req.raw_path_is_utf8(), utf8);
        }
    }

    #[test]
    fn http2_keeps_its_end_of_stream_flag() {
        let mut req = RequestHeader::build("POST", b"/", None).unwrap();
        req.set_version(http::Version::HTTP_2);
        req.set_send_end_stream(false);
        shed_request(&mut req, |_| {}).unwrap();
        assert_eq!(req.send_end_stream(), Some(false));
    }

    #[test]
    fn a_response_keeps_a_custom_reason_and_its_headers() {
        let mut resp = ResponseHeader::build(200, None).unwrap();
        resp.append_header("X-Mixed-Case", "yes").unwrap();
        resp.set_reason_phrase(Some("Fine")).unwrap();
        shed_response(&mut resp, |_| {}).unwrap();
        assert!(!resp.has_case());
        assert_eq!(resp.get_reason_phrase(), Some("Fine"));
        assert_eq!(resp.headers["x-mixed-case"], "yes");

        let mut plain = ResponseHeader::build(404, None).unwrap();
        shed_response(&mut plain, |_| {}).unwrap();
        assert_eq!(plain.get_reason_phrase(), Some("Not Found"));
    }
}
