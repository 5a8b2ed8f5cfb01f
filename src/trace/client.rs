//! The exporter's HTTP client: the crate's reqwest, blocking, on the export thread (which is
//! no tokio runtime's, so no worker ever waits on the collector).

use bytes::Bytes;
use http::{Request, Response};
use opentelemetry_http::{HttpClient, HttpError};
use std::time::Duration;

/// How long one post to the collector may take.
pub(super) const POST_TIMEOUT: Duration = Duration::from_secs(5);

/// A blocking reqwest client, made and dropped on the export thread.
#[derive(Debug)]
pub(super) struct Blocking(reqwest::blocking::Client);

impl Blocking {
    /// A client giving up on a post after [`POST_TIMEOUT`].
    pub(super) fn new() -> Result<Self, reqwest::Error> {
        let client = reqwest::blocking::Client::builder()
            .timeout(POST_TIMEOUT)
            .connect_timeout(POST_TIMEOUT)
            .build()?;
        Ok(Self(client))
    }
}

#[async_trait::async_trait]
impl HttpClient for Blocking {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let answer = self
            .0
            .request(parts.method, parts.uri.to_string())
            .headers(parts.headers)
            .body(body.to_vec())
            .send()?;
        let status = answer.status();
        let headers = answer.headers().clone();
        let body = answer.bytes()?;
        let mut response = Response::builder().status(status).body(body)?;
        *response.headers_mut() = headers;
        Ok(response)
    }
}
