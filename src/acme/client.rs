//! The HTTP client the ACME protocol runs over: reqwest with the public roots and, from
//! `tls.acme.ca_file`, the roots of a private CA (or of a test CA such as pebble).

use crate::telemetry::Causes;
use instant_acme::{BodyWrapper, BytesResponse, HttpClient};
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::time::Duration;

/// How long one request to the ACME server may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The ACME server's HTTP client.
pub(super) struct AcmeHttp {
    client: reqwest::Client,
}

impl AcmeHttp {
    /// A client trusting the public roots and those in `ca_file` (PEM).
    pub(super) fn new(ca_file: Option<&Path>) -> Result<Self, String> {
        let mut builder = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .user_agent(concat!("floodgate/", env!("CARGO_PKG_VERSION")));
        if let Some(path) = ca_file {
            let pem = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let roots = reqwest::Certificate::from_pem_bundle(&pem)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            for root in roots {
                builder = builder.add_root_certificate(root);
            }
        }
        let client = builder.build().map_err(|e| Causes(&e).to_string())?;
        Ok(Self { client })
    }
}

impl HttpClient for AcmeHttp {
    fn request(
        &self,
        req: http::Request<BodyWrapper<bytes::Bytes>>,
    ) -> Pin<Box<dyn Future<Output = Result<BytesResponse, instant_acme::Error>> + Send>> {
        let client = self.client.clone();
        Box::pin(async move {
            use http_body_util::BodyExt;
            let (parts, body) = req.into_parts();
            let body = match body.collect().await {
                Ok(collected) => collected.to_bytes(),
                Err(never) => match never {},
            };
            let url = parts.uri.to_string();
            let sent = client
                .request(parts.method, url)
                .headers(parts.headers)
                .body(body)
                .send()
                .await
                .map_err(other)?;
            let mut answer = http::Response::builder().status(sent.status());
            if let Some(headers) = answer.headers_mut() {
                *headers = sent.headers().clone();
            }
            let body = sent.bytes().await.map_err(other)?;
            let answer = answer
                .body(http_body_util::Full::new(body))
                .map_err(other)?;
            Ok(BytesResponse::from(answer))
        })
    }
}

fn other(e: impl std::error::Error + Send + Sync + 'static) -> instant_acme::Error {
    instant_acme::Error::Other(Box::new(e))
}
