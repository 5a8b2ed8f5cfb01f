//! Problem responses (RFC 9457 `application/problem+json`): the body, the response around
//! it, and a bodiless 500 when even that cannot be built.

use super::Action;
use bytes::Bytes;
use http::header::{HeaderName, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderValue, StatusCode};
use pingora::http::ResponseHeader;

/// The media type of problem bodies (RFC 9457).
pub const PROBLEM_JSON: &str = "application/problem+json";

/// The most bytes of a request an error echoes.
pub const MAX_ECHO: usize = 256;

/// `text` as an error may echo it: its first [`MAX_ECHO`] bytes (cut at a character), `…`
/// marking a cut.
pub fn echo(text: &str) -> String {
    if text.len() <= MAX_ECHO {
        return text.to_owned();
    }
    let mut end = MAX_ECHO - '…'.len_utf8();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// A problem+json body (RFC 9457) with `extra` members merged in.
pub fn problem_body(status: u16, detail: &str, extra: serde_json::Value) -> Bytes {
    let title = StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Error");
    let mut body = serde_json::json!({
        "type": "about:blank",
        "title": title,
        "status": status,
        "detail": detail,
    });
    if let (Some(body), serde_json::Value::Object(extra)) = (body.as_object_mut(), extra) {
        body.extend(extra);
    }
    Bytes::from(body.to_string())
}

/// The problem body of a throttled request, written directly: the hot answer of a flood, it
/// skips building a JSON value. Policy names hold only letters, digits and `-_.` (checked by
/// the config), so nothing in it needs escaping.
/// A calendar quota's refusal also says when the quota resets (`resets_at`, RFC 3339 in the
/// policy's zone: digits and `-:+T` only).
pub(super) fn throttled_body(
    status: u16,
    policy: &str,
    retry_after: u64,
    resets_at: Option<&str>,
) -> Bytes {
    let title = StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Error");
    let (mut code, mut wait) = (itoa::Buffer::new(), itoa::Buffer::new());
    let (code, wait) = (code.format(status), wait.format(retry_after));
    let parts = [
        "{\"type\":\"about:blank\",\"title\":\"",
        title,
        "\",\"status\":",
        code,
        ",\"detail\":\"Rate limit of policy \\\"",
        policy,
        "\\\" exceeded; retry in ",
        wait,
        " s.\",\"policy\":\"",
        policy,
        "\",\"retry_after\":",
        wait,
        if resets_at.is_some() {
            ",\"resets_at\":\""
        } else {
            ""
        },
        resets_at.unwrap_or(""),
        if resets_at.is_some() { "\"}" } else { "}" },
    ];
    let mut body = String::with_capacity(parts.iter().map(|p| p.len()).sum());
    parts.iter().for_each(|p| body.push_str(p));
    Bytes::from(body)
}

/// A problem response: `status`, the problem body and `extra` headers; a 500 if the header
/// cannot be built.
pub(in crate::proxy) fn problem(
    status: u16,
    body: Bytes,
    extra: &[(HeaderName, HeaderValue)],
) -> Action {
    let build = || -> pingora::Result<Box<ResponseHeader>> {
        let mut header = ResponseHeader::build(status, Some(4 + extra.len()))?;
        header.insert_header(CONTENT_TYPE, PROBLEM_JSON)?;
        header.insert_header(CONTENT_LENGTH, body.len())?;
        header.insert_header(CACHE_CONTROL, "no-store")?;
        for (name, value) in extra {
            header.insert_header(name.clone(), value.clone())?;
        }
        Ok(Box::new(header))
    };
    match build() {
        Ok(header) => Action::Answer(header, body),
        Err(e) => {
            log::error!("could not build a {status} answer, answering 500: {e}");
            internal_error()
        }
    }
}

/// A bodiless 500, built from parts that cannot be refused.
fn internal_error() -> Action {
    let mut response = http::Response::new(());
    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    let headers = response.headers_mut();
    headers.insert(CONTENT_LENGTH, HeaderValue::from_static("0"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    let (parts, ()) = response.into_parts();
    Action::Answer(Box::new(ResponseHeader::from(parts)), Bytes::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_echo_is_cut_at_256_bytes_on_a_character() {
        assert_eq!(echo("/short"), "/short");
        let wide = echo(&"é".repeat(300));
        assert!(wide.len() <= MAX_ECHO && wide.starts_with("éé"), "{wide}");
        assert!(wide.ends_with('…'));
    }
}
