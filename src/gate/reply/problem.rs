//! Problem bodies (RFC 9457 `application/problem+json`), and how much of a request an error
//! may echo.

use bytes::Bytes;
use http::StatusCode;

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

/// The reason phrase of `status`, or `Error`.
fn title(status: u16) -> &'static str {
    StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Error")
}

/// A problem+json body (RFC 9457) with `extra` members merged in.
pub fn problem_body(status: u16, detail: &str, extra: serde_json::Value) -> Bytes {
    let mut body = serde_json::json!({
        "type": "about:blank",
        "title": title(status),
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
    let (mut code, mut wait) = (itoa::Buffer::new(), itoa::Buffer::new());
    let (code, wait) = (code.format(status), wait.format(retry_after));
    let parts = [
        "{\"type\":\"about:blank\",\"title\":\"",
        title(status),
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

/// `body`, a problem body (a JSON object), with `"ref"` set to the request id `id`: the
/// reference a refused client quotes to the operator. Every answer a front door makes itself
/// gets it as it is written, whichever part of Floodgate built the body. `body` is returned as
/// it is when it is not an object.
pub fn with_ref(body: &[u8], id: &str) -> Bytes {
    let Some(head) = body.trim_ascii_end().strip_suffix(b"}") else {
        return Bytes::copy_from_slice(body);
    };
    let head = head.trim_ascii_end();
    // Floodgate's own ids (hex digits) need no escaping; a trusted proxy's may.
    let plain = id.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\');
    let escaped;
    let id = match plain {
        true => id,
        false => {
            escaped = serde_json::to_string(id).unwrap_or_default();
            escaped
                .get(1..escaped.len().saturating_sub(1))
                .unwrap_or("")
        }
    };
    let comma = if head.ends_with(b"{") { "" } else { "," };
    let mut out = Vec::with_capacity(head.len() + comma.len() + id.len() + 10);
    out.extend_from_slice(head);
    for part in [comma, "\"ref\":\"", id, "\"}"] {
        out.extend_from_slice(part.as_bytes());
    }
    Bytes::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ref_joins_the_problem_body() {
        let body = problem_body(403, "No.", serde_json::json!({ "policy": "p" }));
        let body: serde_json::Value = serde_json::from_slice(&with_ref(&body, "ab12")).unwrap();
        assert_eq!(body["ref"], "ab12");
        assert_eq!(body["policy"], "p");
        let throttled = throttled_body(429, "p", 3, None);
        let body: serde_json::Value =
            serde_json::from_slice(&with_ref(&throttled, "ab12")).unwrap();
        assert_eq!(
            (&body["ref"], &body["retry_after"]),
            (&"ab12".into(), &3.into())
        );
        let empty: serde_json::Value = serde_json::from_slice(&with_ref(b"{ }", "x")).unwrap();
        assert_eq!(empty, serde_json::json!({ "ref": "x" }));
        let odd = r#"a"b\c"#;
        let body: serde_json::Value = serde_json::from_slice(&with_ref(b"{}", odd)).unwrap();
        assert_eq!(body["ref"], odd);
        assert_eq!(&with_ref(b"not json", "x")[..], b"not json");
    }

    #[test]
    fn an_echo_is_cut_at_256_bytes_on_a_character() {
        assert_eq!(echo("/short"), "/short");
        let wide = echo(&"é".repeat(300));
        assert!(wide.len() <= MAX_ECHO && wide.starts_with("éé"), "{wide}");
        assert!(wide.ends_with('…'));
    }
}
