//! ACME HTTP-01 validations: `GET /.well-known/acme-challenge/{token}` for a token under way
//! is answered with its key authorization before any rule, limit or challenge (the CA's
//! validators come from many addresses and must not be throttled); any other path under it
//! goes the usual way.

use super::render::Handling;
use super::Floodgate;
use crate::acme::HTTP01_PATH;
use bytes::Bytes;
use http::Method;
use pingora::http::ResponseHeader;
use pingora::proxy::Session;

impl Floodgate {
    /// The answer to an HTTP-01 validation, when `session` asks for a token under way.
    pub(super) async fn acme_answer(&self, session: &Session) -> Option<Handling> {
        let answers = self.acme.as_ref()?;
        let request = session.req_header();
        if request.method != Method::GET && request.method != Method::HEAD {
            return None;
        }
        let token = request.uri.path().strip_prefix(HTTP01_PATH)?;
        // Boxed: only an ACME validation waits here, and every request's `request_filter`
        // would otherwise carry this future's room.
        let body = Bytes::from(Box::pin(answers.http01(token)).await?);
        let mut header = ResponseHeader::build(200, Some(3)).ok()?;
        header
            .insert_header(http::header::CONTENT_TYPE, "application/octet-stream")
            .ok()?;
        header
            .insert_header(http::header::CONTENT_LENGTH, body.len())
            .ok()?;
        header
            .insert_header(http::header::CACHE_CONTROL, "no-store")
            .ok()?;
        Some(Handling::Answer(Box::new(header), body))
    }
}
