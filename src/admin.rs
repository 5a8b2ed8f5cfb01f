//! The admin listener: `/metrics` (Prometheus text), `/healthz` and `/readyz`.

use crate::limiter::{Health, Limiter};
use crate::metrics::Metrics;
use async_trait::async_trait;
use http::{header, Response, StatusCode};
use pingora::apps::http_app::ServeHttp;
use pingora::protocols::http::ServerSession;
use std::sync::Arc;

/// Answers the admin endpoints.
pub struct AdminApp {
    metrics: Arc<Metrics>,
    store: Arc<dyn Limiter>,
    ready_needs_store: bool,
}

impl AdminApp {
    /// An admin app exporting `metrics` and reporting `store`'s health; `/readyz` fails while
    /// the store is down only if `ready_needs_store` (nothing can be decided without it).
    pub fn new(metrics: Arc<Metrics>, store: Arc<dyn Limiter>, ready_needs_store: bool) -> Self {
        Self {
            metrics,
            store,
            ready_needs_store,
        }
    }

    /// `/readyz`: the store answers, or the proxy is failing over as configured.
    async fn readiness(&self) -> (StatusCode, Vec<u8>) {
        match self.store.health().await {
            Health::Ready => (StatusCode::OK, b"ready\n".to_vec()),
            Health::Down(why) if self.ready_needs_store => (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("not ready: {why}\n").into_bytes(),
            ),
            Health::Down(why) => (
                StatusCode::OK,
                format!("ready, degraded: {why}; on_error applies\n").into_bytes(),
            ),
        }
    }

    async fn route(
        &self,
        method: &http::Method,
        path: &str,
    ) -> (StatusCode, &'static str, Vec<u8>) {
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
            "/readyz" => {
                let (status, body) = self.readiness().await;
                (status, TEXT, body)
            }
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
        let (method, path) = (req.method.clone(), req.uri.path().to_owned());
        let (status, content_type, body) = self.route(&method, &path).await;
        Response::builder()
            .status(status)
            .header(header::CONTENT_TYPE, content_type)
            .header(header::CONTENT_LENGTH, body.len())
            .body(body)
            .unwrap_or_default()
    }
}
