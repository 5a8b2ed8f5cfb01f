//! The admin listener: `/metrics` (Prometheus text), `/healthz`, `/readyz` and `/offenders`
//! (JSON, or plain text with `?format=text`), open to whoever reaches the listener (loopback
//! by default) unless `admin.protect_metrics` puts `/metrics` and `/offenders` behind a control
//! API token; and under `/v1/` the control API (`api.rs`: bans, overrides, inspect and reset),
//! which needs a token of `admin.token_file`; and the [`Pages`] of a room above (the console,
//! wired by the app).

mod api;
mod attempts;
mod callers;
mod change;
mod cidr;
mod decisions;
mod escape;
mod input;
mod keys;
mod lists;
mod overload;
mod reply;
mod tokens;

pub use api::{Call, ControlApi, MAX_BODY};
pub use reply::Reply;
pub use tokens::{Check, TokenFileError, Tokens, MIN_TOKEN_LEN};

use crate::limiter::{Health, Limiter};
use crate::telemetry::{Metrics, Offenders};
use async_trait::async_trait;
use http::{header, Response, StatusCode};
use pingora::apps::http_app::ServeHttp;
use pingora::protocols::http::ServerSession;
use std::sync::Arc;

/// Pages served on the admin listener by a room above it (the console): GETs of their paths,
/// answered before the built-in views. Their data reads follow `/metrics`' rule.
pub trait Pages: Send + Sync {
    /// The answer to a GET of `path`, or `None` when the path is not theirs.
    fn answer(&self, path: &str, query: Option<&str>) -> Option<Reply>;
    /// Whether `path` reads data that `admin.protect_metrics` puts behind a token.
    fn is_data(&self, path: &str) -> bool;
}

/// Names the pools none of whose backends is up.
pub type PoolsDown = Arc<dyn Fn() -> Vec<String> + Send + Sync>;

/// Answers the admin endpoints.
pub struct AdminApp {
    metrics: Arc<Metrics>,
    store: Arc<dyn Limiter>,
    ready_needs_store: bool,
    offenders: Option<(Arc<Offenders>, usize)>,
    pools_down: Option<PoolsDown>,
    control: Option<ControlApi>,
    protect_views: bool,
    pages: Option<Arc<dyn Pages>>,
}

impl AdminApp {
    /// An admin app exporting `metrics` and reporting `store`'s health; `/readyz` fails while
    /// the store is down only if `ready_needs_store` (nothing can be decided without it).
    pub fn new(metrics: Arc<Metrics>, store: Arc<dyn Limiter>, ready_needs_store: bool) -> Self {
        Self {
            metrics,
            store,
            ready_needs_store,
            offenders: None,
            pools_down: None,
            control: None,
            protect_views: false,
            pages: None,
        }
    }

    /// The same app, whose `/metrics` and `/offenders` need a control API token when
    /// `protect` (`admin.protect_metrics`: identity digests on `/offenders` can be matched back
    /// to callers by whoever knows the digest key).
    pub fn with_protected_views(mut self, protect: bool) -> Self {
        self.protect_views = protect;
        self
    }

    /// The refusal of a call to a protected view (`/metrics`, `/offenders`) whose token does
    /// not open it; `None` when it may be answered.
    fn view_refused(&self, path: &str, call: &Call<'_>) -> Option<Reply> {
        let data = self.pages.as_ref().is_some_and(|p| p.is_data(path));
        if !self.protect_views || !(matches!(path, "/metrics" | "/offenders") || data) {
            return None;
        }
        let Some(control) = &self.control else {
            return None;
        };
        match control
            .tokens
            .check_from(call.authorization, call.peer, std::time::Instant::now())
        {
            Check::Allowed(_) => None,
            refused => Some(api::not_opened(&refused, &self.metrics)),
        }
    }

    /// The same app, also serving the control API under `/v1/`.
    pub fn with_control(mut self, control: ControlApi) -> Self {
        self.control = Some(control);
        self
    }

    /// The same app, also serving `pages` (the console).
    pub fn with_pages(mut self, pages: Arc<dyn Pages>) -> Self {
        self.pages = Some(pages);
        self
    }

    /// The same app, whose `/readyz` fails while a pool has no backend up.
    pub fn with_pools(mut self, pools_down: PoolsDown) -> Self {
        self.pools_down = Some(pools_down);
        self
    }

    /// The same app, also serving the `top` entries of `offenders` at `/offenders`.
    pub fn with_offenders(mut self, offenders: Arc<Offenders>, top: usize) -> Self {
        self.offenders = Some((offenders, top));
        self
    }

    /// `/offenders`: the most throttled identities, as JSON or (`format=text`) a table.
    fn offenders(&self, query: Option<&str>) -> (StatusCode, &'static str, Vec<u8>) {
        let Some((offenders, top)) = &self.offenders else {
            return (
                StatusCode::NOT_FOUND,
                "text/plain; charset=utf-8",
                b"no offenders view\n".to_vec(),
            );
        };
        let list = offenders.top(*top);
        if query.is_some_and(|q| q.split('&').any(|p| p == "format=text")) {
            let mut text = format!(
                "{:<18} {:>10} {:>8}  policy\n",
                "identity", "throttled", "±"
            );
            for o in &list {
                text.push_str(&format!(
                    "{:<18} {:>10} {:>8}  {}\n",
                    o.identity, o.throttled, o.error, o.policy
                ));
            }
            return (
                StatusCode::OK,
                "text/plain; charset=utf-8",
                text.into_bytes(),
            );
        }
        let body = serde_json::json!({
            "window_seconds": offenders.window().as_secs(),
            "offenders": list,
        });
        (
            StatusCode::OK,
            "application/json",
            body.to_string().into_bytes(),
        )
    }

    /// `/readyz`: every pool has a backend up, and the store answers or the proxy is failing
    /// over as configured.
    async fn readiness(&self) -> (StatusCode, Vec<u8>) {
        let down = self.pools_down.as_ref().map(|f| f()).unwrap_or_default();
        if !down.is_empty() {
            let message = format!("not ready: no backend up in pool {}\n", down.join(", "));
            return (StatusCode::SERVICE_UNAVAILABLE, message.into_bytes());
        }
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

    /// The answer of the built-in views.
    async fn built_in(&self, method: &http::Method, path: &str, query: Option<&str>) -> Reply {
        let (status, content_type, body) = self.route(method, path, query).await;
        Reply {
            status,
            content_type,
            body,
            headers: Vec::new(),
        }
    }

    async fn route(
        &self,
        method: &http::Method,
        path: &str,
        query: Option<&str>,
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
            "/offenders" => self.offenders(query),
            _ => (
                StatusCode::NOT_FOUND,
                TEXT,
                b"not found; try /console, /metrics, /healthz, /readyz or /offenders\n".to_vec(),
            ),
        }
    }
}

/// The request body, or `None` when it is larger than [`MAX_BODY`] (or cannot be read).
async fn read_body(session: &mut ServerSession) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        match session.read_request_body().await {
            Ok(Some(chunk)) if body.len() + chunk.len() <= MAX_BODY => {
                body.extend_from_slice(&chunk)
            }
            Ok(Some(_)) | Err(_) => return None,
            Ok(None) => return Some(body),
        }
    }
}

#[async_trait]
impl ServeHttp for AdminApp {
    async fn response(&self, session: &mut ServerSession) -> Response<Vec<u8>> {
        let req = session.req_header();
        let (method, path) = (req.method.clone(), req.uri.path().to_owned());
        let query = req.uri.query().map(str::to_owned);
        let authorization = req
            .headers
            .get(header::AUTHORIZATION)
            .map(|v| v.as_bytes().to_vec());
        let idempotency_key = req
            .headers
            .get("idempotency-key")
            .map(|v| v.as_bytes().to_vec());
        let peer = session
            .client_addr()
            .and_then(|a| a.as_inet().map(|a| a.ip().to_canonical()));
        let control_call = self.control.is_some() && path.starts_with("/v1/");
        let body = match control_call {
            true => read_body(session).await,
            false => Some(Vec::new()),
        };
        let call = Call {
            method: &method,
            path: &path,
            query: query.as_deref(),
            authorization: authorization.as_deref(),
            idempotency_key: idempotency_key.as_deref(),
            body: body.as_deref(),
            peer,
        };
        let reply = match (&self.control, control_call) {
            (Some(control), true) => control.answer(&call).await,
            _ => match self.view_refused(&path, &call) {
                Some(refused) => refused,
                None if method == http::Method::GET || method == http::Method::HEAD => {
                    let page = self.pages.as_ref();
                    match page.and_then(|p| p.answer(&path, query.as_deref())) {
                        Some(reply) => reply,
                        None => self.built_in(&method, &path, query.as_deref()).await,
                    }
                }
                None => self.built_in(&method, &path, query.as_deref()).await,
            },
        };
        let mut response = Response::builder()
            .status(reply.status)
            .header(header::CONTENT_TYPE, reply.content_type)
            .header(header::CONTENT_LENGTH, reply.body.len());
        for (name, value) in reply.headers {
            response = response.header(name, value);
        }
        response.body(reply.body).unwrap_or_default()
    }
}
