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
