//! An admin answer: a status, a media type, a body and extra headers; problem+json (RFC 9457)
//! for every control API error, naming the field at fault.

use http::header::{HeaderName, HeaderValue};
use http::StatusCode;
use serde_json::{json, Value};

/// One admin answer.
#[derive(Debug)]
pub struct Reply {
    /// The status.
    pub status: StatusCode,
    /// The `Content-Type`.
    pub content_type: &'static str,
    /// The body.
    pub body: Vec<u8>,
    /// Headers besides `Content-Type` and `Content-Length`.
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl Reply {
    /// A plain-text answer.
    pub fn text(status: StatusCode, body: impl Into<Vec<u8>>) -> Self {
        Self::of(status, "text/plain; charset=utf-8", body.into())
    }

    /// A JSON answer.
    pub fn json(status: StatusCode, value: &Value) -> Self {
        Self::of(status, "application/json", value.to_string().into_bytes())
    }

    /// An answer with no body.
    pub fn empty(status: StatusCode) -> Self {
        Self::of(status, "text/plain; charset=utf-8", Vec::new())
    }

    /// A problem: `status`, saying `detail`, with `extra` members (such as the field).
    pub fn problem(status: StatusCode, detail: &str, extra: Value) -> Self {
        let mut body = json!({
            "type": "about:blank",
            "title": status.canonical_reason().unwrap_or("Error"),
            "status": status.as_u16(),
            "detail": detail,
        });
        if let (Some(body), Value::Object(extra)) = (body.as_object_mut(), extra) {
            body.extend(extra);
        }
        Self::of(
            status,
            "application/problem+json",
            body.to_string().into_bytes(),
        )
    }

    /// A 400 naming the bad `field`.
    pub fn bad_field(field: &str, detail: &str) -> Self {
        Self::problem(StatusCode::BAD_REQUEST, detail, json!({ "field": field }))
    }

    /// A 404 naming what was not found and the field that named it.
    pub fn unknown(field: &str, detail: &str) -> Self {
        Self::problem(StatusCode::NOT_FOUND, detail, json!({ "field": field }))
    }

    /// The same answer with one more header.
    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    fn of(status: StatusCode, content_type: &'static str, body: Vec<u8>) -> Self {
        Self {
            status,
            content_type,
            body,
            headers: Vec::new(),
        }
    }
}

/// Whole seconds until `expires_at_ms`, rounded up; `null` for never.
pub(super) fn expires_in(expires_at_ms: Option<u64>, now: u64) -> Value {
    match expires_at_ms {
        Some(end) => json!(end.saturating_sub(now).div_ceil(1000)),
        None => Value::Null,
    }
}
