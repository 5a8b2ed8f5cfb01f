//! A real HTTP/1.1 upstream (hyper on its own tokio runtime) that answers 200 to everything
//! (after `ms` milliseconds for `?ms=N`), counts what it serves and keeps the target and headers
//! of the last request it served. Stopped, with its connections, when dropped.

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// The target (path and query, as received) and headers of a request the upstream served.
type Seen = Arc<Mutex<Option<(String, http::HeaderMap)>>>;

pub struct Upstream {
    pub addr: String,
    served: Arc<AtomicUsize>,
    last: Seen,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Upstream {
    pub fn start() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind upstream");
        listener.set_nonblocking(true).expect("non-blocking");
        let addr = listener.local_addr().expect("address").to_string();
        let served = Arc::new(AtomicUsize::new(0));
        let last: Seen = Arc::default();
        let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
        let (counter, seen) = (served.clone(), last.clone());
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("upstream runtime");
            runtime.block_on(serve(listener, counter, seen, stop));
        });
        Self {
            addr,
            served,
            last,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    pub fn served(&self) -> usize {
        self.served.load(Ordering::SeqCst)
    }

    /// The path and query of the last request served, as the upstream received them.
    pub fn last_target(&self) -> Option<String> {
        self.last
            .lock()
            .unwrap()
            .as_ref()
            .map(|(target, _)| target.clone())
    }

    /// Every value of header `name` in the last request served, in order.
    pub fn last_header(&self, name: &str) -> Vec<String> {
        let last = self.last.lock().unwrap();
        let Some((_, headers)) = last.as_ref() else {
            return Vec::new();
        };
        headers
            .get_all(name)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect()
    }
}

async fn serve(
    listener: std::net::TcpListener,
    served: Arc<AtomicUsize>,
    last: Seen,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
    loop {
        tokio::select! {
            _ = &mut stop => return,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let (served, last) = (served.clone(), last.clone());
                tokio::spawn(async move {
                    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        // `/reset` drops the connection without an answer.
                        let reset = req.uri().path() == "/reset";
                        // `/slow?ms=N` answers after N milliseconds.
                        let delay = req.uri().query().and_then(|q| q.strip_prefix("ms=")).and_then(|ms| ms.parse().ok());
                        let served = served.clone();
                        let target = req.uri().path_and_query().map_or_else(String::new, |p| p.to_string());
                        let seen = (target, req.headers().clone());
                        let last = last.clone();
                        async move {
                            if reset {
                                return Err("reset");
                            }
                            *last.lock().unwrap() = Some(seen);
                            served.fetch_add(1, Ordering::SeqCst);
                            if let Some(ms) = delay {
                                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                            }
                            Ok(hyper::Response::new(Full::new(Bytes::from_static(b"ok"))))
                        }
                    });
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
