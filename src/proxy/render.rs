//! Replies into pingora's responses: a refusal becomes a problem response (RFC 9457
//! `application/problem+json`, never stored). Rendering cannot fail open: a refusal that
//! cannot be built becomes a 500, never a forward.

use crate::gate::reply::{RateLimitHeaders, Refusal, Reply, PROBLEM_JSON};
use bytes::Bytes;
use http::header::{HeaderName, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderValue, StatusCode};
use pingora::http::ResponseHeader;

/// What the proxy does with a request.
pub enum Handling {
    /// Forward it, adding these `RateLimit-Policy` and `RateLimit` values to the response.
    Forward(Option<RateLimitHeaders>),
    /// Answer it with this response.
    Answer(Box<ResponseHeader>, Bytes),
}

impl From<Reply> for Handling {
    fn from(reply: Reply) -> Self {
        match reply {
            Reply::Forward(headers) => Handling::Forward(headers),
            Reply::Refuse(Refusal {
                status,
                headers,
                body,
            }) => problem(status, body, &headers),
        }
    }
}

/// A problem response: `status`, the problem body and `extra` headers; a 500 if the header
/// cannot be built.
pub(super) fn problem(status: u16, body: Bytes, extra: &[(HeaderName, HeaderValue)]) -> Handling {
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
        Ok(header) => Handling::Answer(header, body),
        Err(e) => {
            log::error!("could not build a {status} answer, answering 500: {e}");
            internal_error()
        }
    }
}

/// A bodiless 500, built from parts that cannot be refused.
fn internal_error() -> Handling {
    let mut response = http::Response::new(());
    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    let headers = response.headers_mut();
    headers.insert(CONTENT_LENGTH, HeaderValue::from_static("0"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    let (parts, ()) = response.into_parts();
    Handling::Answer(Box::new(ResponseHeader::from(parts)), Bytes::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_that_cannot_be_built_is_a_500_not_a_forward() {
        let Handling::Answer(header, body) = problem(1000, Bytes::from_static(b"{}"), &[]) else {
            panic!("a broken refusal still answers");
        };
        assert_eq!(header.status, 500);
        assert!(body.is_empty());
    }

    #[test]
    fn a_refusal_is_a_problem_response_never_stored() {
        let reply = Reply::Refuse(Refusal {
            status: 429,
            headers: [(http::header::RETRY_AFTER, HeaderValue::from(3u64))]
                .into_iter()
                .collect(),
            body: Bytes::from_static(b"{}"),
        });
        let Handling::Answer(header, body) = Handling::from(reply) else {
            panic!("a refusal is answered");
        };
        assert_eq!(header.status, 429);
        assert_eq!(header.headers["content-type"], PROBLEM_JSON);
        assert_eq!(header.headers["cache-control"], "no-store");
        assert_eq!(header.headers["retry-after"], "3");
        assert_eq!(&body[..], b"{}");
    }
}
