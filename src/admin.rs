//! The admin listener: `/metrics` (Prometheus text), `/healthz` and `/readyz`.

use crate::metrics::Metrics;
use async_trait::async_trait;
use http::{header, Response, StatusCode};
use pingora::apps::http_app::ServeHttp;
use pingora::protocols::http::ServerSession;
use std::sync::Arc;

/// Answers the admin endpoints.
pub struct AdminApp {
    metrics: Arc<Metrics>,
}

impl AdminApp {
    /// An admin app exporting `metrics`.
    pub fn new(metrics: Arc<Metrics>) -> Self {
        Self { metrics }
    }

    fn route(&self, method: &http::Method, path: &str) -> (StatusCode, &'static str, Vec<u8>) {
        const TEXT: &str = "text/plain; charset=utf-8";
        if method != http::Method::GET && method != http::Method::HEAD {
            return (
                StatusCode::METHOD_NOT_ALLOWED,
                TEXT,
                b"only GET and HEAD\n".to_vec(),
            );
        }
        match path {
            "/metrics" => (
                StatusCode::OK,
                "text/plain; version=0.0.4; charset=utf-8",
                self.metrics.render().into_bytes(),
            ),
            "/healthz" => (StatusCode::OK, TEXT, b"ok\n".to_vec()),
            // The memory store is always reachable; a remote store reports its own health.
            "/readyz" => (StatusCode::OK, TEXT, b"ready\n".to_vec()),
            _ => (
                StatusCode::NOT_FOUND,
                TEXT,
                b"not found; try /metrics, /healthz or /readyz\n".to_vec(),
            ),
        }
    }
}

#[async_trait]
impl ServeHttp for AdminApp {
    async fn response(&self, session: &mut ServerSession) -> Response<Vec<u8>> {
        let req = session.req_header();
        let (status, content_type, body) = self.route(&req.method, req.uri.path());
        Response::builder()
            .status(status)
            .header(header::CONTENT_TYPE, content_type)
            .header(header::CONTENT_LENGTH, body.len())
            .body(body)
            .unwrap_or_default()
    }
}
