//! A real HTTP/1.1 upstream (hyper on its own tokio runtime) that answers 200 to everything
//! and counts what it serves. The query chooses the answer: `ms=N` answers after N
//! milliseconds, `status=N` with status N, `usage=N` adds `x-usage: N` (a metered cost). Each answer names the
//! upstream (`x-served-by`) and the `Host` it was sent (`x-seen-host`). `/healthz` is its
//! health endpoint, counted apart, which can be made to fail or hang; the whole upstream can
//! be made to hang. It keeps the target and headers of the last request it served. Stopped,
//! with its connections, when dropped.

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// How `/healthz` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Health {
    /// 200.
    Ok = 0,
    /// 500.
    Fail = 1,
    /// Never.
    Hang = 2,
}

/// What the connections share.
#[derive(Default)]
struct State {
    served: AtomicUsize,
    probes: AtomicUsize,
    health: AtomicU8,
    hang: AtomicBool,
    /// The target (path and query, as received) and headers of the last request served.
    last: Mutex<Option<(String, http::HeaderMap)>>,
}

pub struct Upstream {
    pub addr: String,
    state: Arc<State>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Upstream {
    pub fn start() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind upstream");
        listener.set_nonblocking(true).expect("non-blocking");
        let addr = listener.local_addr().expect("address").to_string();
        let state = Arc::new(State::default());
        let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
        let (shared, name) = (state.clone(), addr.clone());
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("upstream runtime");
            runtime.block_on(serve(listener, shared, name, stop));
        });
        Self {
            addr,
            state,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    /// Requests served, health checks apart.
    pub fn served(&self) -> usize {
        self.state.served.load(Ordering::SeqCst)
    }

    /// Health checks received.
    pub fn probes(&self) -> usize {
        self.state.probes.load(Ordering::SeqCst)
    }

    /// How `/healthz` answers from now on.
    pub fn set_health(&self, health: Health) {
        self.state.health.store(health as u8, Ordering::SeqCst);
    }

    /// The path and query of the last request served, as the upstream received them.
    pub fn last_target(&self) -> Option<String> {
        let last = self.state.last.lock().unwrap();
        last.as_ref().map(|(target, _)| target.clone())
    }

    /// Every value of header `name` in the last request served, in order.
    pub fn last_header(&self, name: &str) -> Vec<String> {
        let last = self.state.last.lock().unwrap();
        let Some((_, headers)) = last.as_ref() else {
            return Vec::new();
        };
        headers
            .get_all(name)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect()
    }

    /// Whether every request but `/healthz` is left unanswered from now on.
    pub fn set_hang(&self, hang: bool) {
        self.state.hang.store(hang, Ordering::SeqCst);
    }
}

type Answer = hyper::Response<Full<Bytes>>;

/// The answer to `req`, or `Err` to drop the connection.
async fn answer(
    req: hyper::Request<hyper::body::Incoming>,
    state: Arc<State>,
    name: Arc<str>,
) -> Result<Answer, &'static str> {
    let path = req.uri().path();
    // `/reset` drops the connection without an answer.
    if path == "/reset" {
        return Err("reset");
    }
    let mut status = 200;
    if path == "/healthz" {
        state.probes.fetch_add(1, Ordering::SeqCst);
        match state.health.load(Ordering::SeqCst) {
            0 => {}
            1 => status = 500,
            _ => std::future::pending::<()>().await,
        }
    } else {
        if state.hang.load(Ordering::SeqCst) {
            std::future::pending::<()>().await;
        }
        state.served.fetch_add(1, Ordering::SeqCst);
        let target = req
            .uri()
            .path_and_query()
            .map_or_else(String::new, |p| p.to_string());
        *state.last.lock().unwrap() = Some((target, req.headers().clone()));
        // `?ms=N` answers after N milliseconds.
        if let Some(ms) = param(&req, "ms").and_then(|ms| ms.parse().ok()) {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
        }
        if let Some(chosen) = param(&req, "status").and_then(|s| s.parse().ok()) {
            status = chosen;
        }
    }
    let host = req.headers().get("host").cloned();
    let usage = param(&req, "usage").and_then(|u| hyper::header::HeaderValue::from_str(u).ok());
    // `?say=WORD` answers WORD instead of `ok` (a page a browser can be told to wait for).
    let body = match param(&req, "say") {
        Some(word) => Bytes::from(word.to_owned()),
        None => Bytes::from_static(b"ok"),
    };
    let mut resp = hyper::Response::new(Full::new(body));
    *resp.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or_default();
    let headers = resp.headers_mut();
    if let Some(usage) = usage {
        headers.insert("x-usage", usage);
    }
    if let Ok(value) = hyper::header::HeaderValue::from_str(&name) {
        headers.insert("x-served-by", value);
    }
    if let Some(host) = host {
        headers.insert("x-seen-host", host);
    }
    Ok(resp)
}

/// The value of query parameter `name`.
fn param<'r>(req: &'r hyper::Request<hyper::body::Incoming>, name: &str) -> Option<&'r str> {
    req.uri()
        .query()?
        .split('&')
        .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
}

async fn serve(
    listener: std::net::TcpListener,
    state: Arc<State>,
    name: String,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
    let name: Arc<str> = name.into();
    loop {
        tokio::select! {
            _ = &mut stop => return,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let (state, name) = (state.clone(), name.clone());
                tokio::spawn(async move {
                    let service = service_fn(move |req| answer(req, state.clone(), name.clone()));
                    let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        }
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
