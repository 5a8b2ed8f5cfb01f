//! gRPC requests answered by the proxy itself: a gRPC client reads the call's outcome from
//! `grpc-status`, not from the HTTP status, so a refusal is HTTP 200 in gRPC's trailers-only
//! form (`content-type: application/grpc`, `grpc-status`, `grpc-message`, no body), keeping the
//! refusal's other headers (`RateLimit`, `RateLimit-Policy`, `Retry-After`, …).
//!
//! A throttled call (the refusal carries `RateLimit`) is `RESOURCE_EXHAUSTED` (8); the rest
//! follow gRPC's HTTP-to-status mapping. Still fail-closed: an answer that cannot be
//! rebuilt is sent as the HTTP refusal it was, never forwarded.

use http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use http::HeaderValue;
use pingora::http::{RequestHeader, ResponseHeader};

/// `RESOURCE_EXHAUSTED`: the status of a throttled call.
pub(super) const RESOURCE_EXHAUSTED: u8 = 8;

/// Whether `req` is a gRPC call (`content-type: application/grpc`, `application/grpc+proto`,
/// `application/grpc-web…`).
pub(super) fn is_grpc(req: &RequestHeader) -> bool {
    req.headers
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/grpc"))
}

/// The gRPC status code for a refusal with `status` (`throttled`: it carries `RateLimit`).
pub(super) fn code(status: u16, throttled: bool) -> u8 {
    match (status, throttled) {
        (_, true) => RESOURCE_EXHAUSTED,
        (400, _) => 3,              // INVALID_ARGUMENT: the request itself is at fault
        (401, _) => 16,             // UNAUTHENTICATED
        (403, _) => 7,              // PERMISSION_DENIED
        (404, _) => 12,             // UNIMPLEMENTED
        (429 | 502 | 503, _) => 14, // UNAVAILABLE
        (504, _) => 4,              // DEADLINE_EXCEEDED
        _ => 13,                    // INTERNAL
    }
}

/// `text` as a `grpc-message` value: percent-encoded outside printable ASCII, and `%` itself.
pub(super) fn message(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b' '..=b'~' if b != b'%' => out.push(char::from(b)),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The gRPC form of the refusal `header` with problem `body`; `None` if it cannot be built.
pub(super) fn refusal(header: &ResponseHeader, body: &[u8]) -> Option<Box<ResponseHeader>> {
    let status = header.status.as_u16();
    let throttled = header.headers.contains_key("ratelimit");
    let detail = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|problem| problem.get("detail")?.as_str().map(str::to_owned))
        .unwrap_or_else(|| {
            let reason = header.status.canonical_reason().unwrap_or("refused");
            format!("{status} {reason}")
        });
    let mut grpc = ResponseHeader::build(200, Some(header.headers.len() + 3)).ok()?;
    for (name, value) in &header.headers {
        if name != CONTENT_TYPE && name != CONTENT_LENGTH {
            grpc.append_header(name.clone(), value.clone()).ok()?;
        }
    }
    grpc.insert_header(CONTENT_TYPE, "application/grpc").ok()?;
    grpc.insert_header(CONTENT_LENGTH, "0").ok()?;
    grpc.insert_header("grpc-status", code(status, throttled).to_string())
        .ok()?;
    let message = HeaderValue::from_str(&message(&detail)).ok()?;
    grpc.insert_header("grpc-message", message).ok()?;
    Some(Box::new(grpc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_requests_are_known_by_their_content_type() {
        let mut req = RequestHeader::build("POST", b"/pkg.Svc/Call", None).unwrap();
        assert!(!is_grpc(&req));
        req.insert_header("content-type", "application/grpc+proto")
            .unwrap();
        assert!(is_grpc(&req));
        req.insert_header("content-type", "application/json")
            .unwrap();
        assert!(!is_grpc(&req));
    }

    #[test]
    fn a_throttled_refusal_becomes_resource_exhausted_with_its_headers() {
        let mut header = ResponseHeader::build(429, None).unwrap();
        header
            .insert_header("content-type", "application/problem+json")
            .unwrap();
        header.insert_header("content-length", "99").unwrap();
        header.insert_header("retry-after", "3").unwrap();
        header.insert_header("ratelimit", "\"p\";r=0;t=3").unwrap();
        let body = br#"{"detail":"Rate limit of policy \"p\" exceeded; retry in 3 s."}"#;
        let grpc = refusal(&header, body).unwrap();
        assert_eq!(grpc.status, 200);
        assert_eq!(grpc.headers["grpc-status"], "8");
        assert_eq!(
            grpc.headers["grpc-message"],
            "Rate limit of policy \"p\" exceeded; retry in 3 s."
        );
        assert_eq!(grpc.headers["content-type"], "application/grpc");
        assert_eq!(grpc.headers["content-length"], "0");
        assert_eq!(grpc.headers["retry-after"], "3");
        assert_eq!(grpc.headers["ratelimit"], "\"p\";r=0;t=3");
    }

    #[test]
    fn other_refusals_follow_the_http_mapping_and_messages_are_encoded() {
        assert_eq!(code(401, false), 16);
        assert_eq!(code(503, false), 14);
        assert_eq!(code(503, true), RESOURCE_EXHAUSTED);
        assert_eq!(code(504, false), 4);
        assert_eq!(message("100% sûr\n"), "100%25 s%C3%BBr%0A");
        let header = ResponseHeader::build(403, None).unwrap();
        let grpc = refusal(&header, b"not json").unwrap();
        assert_eq!(grpc.headers["grpc-status"], "7");
        assert_eq!(grpc.headers["grpc-message"], "403 Forbidden");
    }
}
