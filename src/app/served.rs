//! The admin and check endpoints as the listener serves them: a pingora `ServeHttp` app
//! whose requests mark their connection's head watch, as the proxy's do (the head whole once
//! read; the connection idle once answered), so the listener's sweep holds the endpoint to
//! `server.header_timeout` and `server.keepalive_timeout`. A head pingora's parser refuses is
//! answered 400 and the connection closed (pingora's own `ServeHttp` glue closes it silently).
//! A graceful shutdown closes a connection waiting for its next head.

use crate::proxy::head_watch;
use async_trait::async_trait;
use pingora::apps::http_app::ServeHttp;
use pingora::apps::{HttpPersistentSettings, HttpServerApp, ReusedHttpStream};
use pingora::http::ResponseHeader;
use pingora::protocols::http::ServerSession;
use pingora::server::ShutdownWatch;
use pingora::ErrorType;
use std::sync::Arc;
use std::time::Instant;

/// A `ServeHttp` app whose connections are watched.
pub(super) struct Served<SV> {
    app: SV,
    /// Whether connections stay open between requests (`server.keepalive_timeout` above 0).
    keepalive: bool,
}

impl<SV> Served<SV> {
    /// `app`, its connections kept open between requests when `keepalive`.
    pub(super) fn new(app: SV, keepalive: bool) -> Self {
        Self { app, keepalive }
    }
}

/// Reads the next request head of `http`: `false` when there is none to answer (closed, or
/// refused with a 400).
async fn read_head(http: &mut ServerSession) -> bool {
    match http.read_request().await {
        Ok(read) => read,
        Err(e) => {
            if matches!(e.etype(), ErrorType::InvalidHTTPHeader) {
                log::debug!("refusing a request head: {e}");
                if let Err(e) = http.respond_error(400).await {
                    log::debug!("could not answer a refused head: {e}");
                }
            }
            http.shutdown().await;
            false
        }
    }
}

/// Writes `response` to `http`.
async fn write(http: &mut ServerSession, response: http::Response<Vec<u8>>) {
    let (parts, body) = response.into_parts();
    let header: ResponseHeader = parts.into();
    if let Err(e) = http.write_response_header(Box::new(header)).await {
        log::debug!("could not write a response head: {e}");
        return;
    }
    if !body.is_empty() {
        if let Err(e) = http.write_response_body(body.into(), true).await {
            log::debug!("could not write a response body: {e}");
        }
    }
}

#[async_trait]
impl<SV: ServeHttp + Send + Sync + 'static> HttpServerApp for Served<SV> {
    async fn process_new_http(
        self: &Arc<Self>,
        mut http: ServerSession,
        shutdown: &ShutdownWatch,
    ) -> Option<ReusedHttpStream> {
        // A graceful shutdown does not wait for a head that has not come (an idle
        // keep-alive connection), as pingora's proxy does not.
        let mut shutting_down = shutdown.clone();
        let read = tokio::select! {
            biased;
            read = read_head(&mut http) => read,
            _ = shutting_down.wait_for(|down| *down) => false,
        };
        if !read {
            return None;
        }
        if let Some(watch) = head_watch(&http) {
            watch.complete();
        }
        // The listener's sweep ends idle connections (`server.keepalive_timeout`).
        let keepalive = self.keepalive && !*shutdown.borrow();
        http.set_keepalive(keepalive.then_some(0));
        let response = self.app.response(&mut http).await;
        write(&mut http, response).await;
        // A body not read whole would be drained unwatched before the next head: close.
        if !http.is_body_done() {
            http.set_keepalive(None);
        } else if let Some(watch) = head_watch(&http) {
            watch.request_done(Instant::now());
        }
        let settings = HttpPersistentSettings::for_session(&http);
        match http.finish().await {
            Ok(reusable) => reusable.map(|s| ReusedHttpStream::from_reusable_stream(s, settings)),
            Err(e) => {
                log::debug!("could not finish a request: {e}");
                None
            }
        }
    }
}
