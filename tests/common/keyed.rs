//! A backend that knows its API keys, as the backends of `[identity.verify]` do: under `/api/`
//! it answers 200 to a request whose `x-api-key` it knows (or whose `Authorization` is
//! `Bearer good`) and 401 to any other; anything else (`/public/…`) is 200 to anyone. With
//! `?say_proof=1` it answers 200 whatever the key and states its verdict in `x-key-proof`
//! (`valid` or `invalid`) instead. It counts the requests that reached it, and keys can be
//! taken back while it runs. Stopped when dropped.

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// What the connections share.
struct Known {
    keys: Mutex<HashSet<String>>,
    reached: AtomicUsize,
}

pub struct Keyed {
    pub addr: String,
    known: Arc<Known>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Keyed {
    /// A backend knowing `keys`.
    pub fn start(keys: &[&str]) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the backend");
        listener.set_nonblocking(true).expect("non-blocking");
        let addr = listener.local_addr().expect("address").to_string();
        let known = Arc::new(Known {
            keys: Mutex::new(keys.iter().map(|k| k.to_string()).collect()),
            reached: AtomicUsize::new(0),
        });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let shared = known.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("backend runtime");
            runtime.block_on(serve(listener, shared, stopped));
        });
        Self {
            addr,
            known,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// How many requests reached it.
    pub fn reached(&self) -> usize {
        self.known.reached.load(Ordering::SeqCst)
    }

    /// Takes `key` back: from now on it is refused.
    pub fn revoke(&self, key: &str) {
        self.known.keys.lock().unwrap().remove(key);
    }
}

impl Drop for Keyed {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve(
    listener: std::net::TcpListener,
    known: Arc<Known>,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
    loop {
        tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let known = known.clone();
                tokio::spawn(async move {
                    let answer = move |req| answer(req, known.clone());
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service_fn(answer))
                        .await;
                });
            }
        }
    }
}

async fn answer(
    req: hyper::Request<hyper::body::Incoming>,
    known: Arc<Known>,
) -> Result<hyper::Response<Full<Bytes>>, std::convert::Infallible> {
    known.reached.fetch_add(1, Ordering::SeqCst);
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    let key_known = header("x-api-key").is_some_and(|k| known.keys.lock().unwrap().contains(k));
    let accepted = key_known || header("authorization") == Some("Bearer good");
    let says = req.uri().query().is_some_and(|q| q.contains("say_proof=1"));
    let (status, proof) = match (req.uri().path().starts_with("/api/"), says) {
        (false, _) => (200, None),
        (true, true) => (200, Some(if accepted { "valid" } else { "invalid" })),
        (true, false) => (if accepted { 200 } else { 401 }, None),
    };
    let mut resp = hyper::Response::new(Full::new(Bytes::from_static(b"ok")));
    *resp.status_mut() = hyper::StatusCode::from_u16(status).expect("a status");
    if let Some(proof) = proof {
        resp.headers_mut().insert(
            "x-key-proof",
            hyper::header::HeaderValue::from_static(proof),
        );
    }
    Ok(resp)
}
