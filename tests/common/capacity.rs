//! A backend of fixed capacity, as overload protection meets it in production: `workers`
//! requests are served at once, each taking `service` (or a time of its own within a range:
//! [`Capacity::start_spread`]; a page, HTML, for `Accept: text/html`, else JSON); the rest
//! wait inside it. `/slow` takes a worker for [`SLOW`]; `/hang` never answers and takes no
//! worker. Like a thread-per-request server (Python's `http.server`), a request's work runs to
//! its end whatever its connection does, and a connection the proxy half-closes is closed once
//! its answer is written. It counts how many requests it holds at once (served and waiting,
//! what it would run out of) and the most it ever held. It knows the customers' API keys
//! (`x-api-key: customer-…`) and answers any other key 401, after the same work. Stopped when
//! dropped.

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// How long `/slow` takes a worker.
pub const SLOW: Duration = Duration::from_secs(1);

/// What the connections share.
struct Counts {
    arrived: AtomicUsize,
    held: AtomicUsize,
    most_held: AtomicUsize,
    served: AtomicUsize,
}

pub struct Capacity {
    pub addr: String,
    counts: Arc<Counts>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Capacity {
    /// A backend serving `workers` requests at once, each in `service`.
    pub fn start(workers: usize, service: Duration) -> Self {
        Self::start_spread(workers, service, service)
    }

    /// A backend serving `workers` requests at once, each in its own time from `fastest` to
    /// `slowest` (spread evenly, by a hash of its arrival: no clock, no randomness).
    pub fn start_spread(workers: usize, fastest: Duration, slowest: Duration) -> Self {
        let service = (fastest, slowest);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the backend");
        listener.set_nonblocking(true).expect("non-blocking");
        let addr = listener.local_addr().expect("address").to_string();
        let counts = Arc::new(Counts {
            arrived: AtomicUsize::new(0),
            held: AtomicUsize::new(0),
            most_held: AtomicUsize::new(0),
            served: AtomicUsize::new(0),
        });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let shared = counts.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("backend runtime");
            let workers = Arc::new(Semaphore::new(workers));
            runtime.block_on(serve(listener, shared, workers, service, stopped));
        });
        Self {
            addr,
            counts,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// The most requests it held at once.
    pub fn most_held(&self) -> usize {
        self.counts.most_held.load(Ordering::SeqCst)
    }

    /// Requests it holds now.
    pub fn held(&self) -> usize {
        self.counts.held.load(Ordering::SeqCst)
    }

    /// Requests it answered.
    pub fn served(&self) -> usize {
        self.counts.served.load(Ordering::SeqCst)
    }

    /// Forgets the most held so far (a new phase of a test starts).
    pub fn reset_most_held(&self) {
        self.counts.most_held.store(self.held(), Ordering::SeqCst);
    }
}

impl Drop for Capacity {
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
    counts: Arc<Counts>,
    workers: Arc<Semaphore>,
    service: (Duration, Duration),
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
    loop {
        tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let (counts, workers) = (counts.clone(), workers.clone());
                tokio::spawn(async move {
                    let answer = move |req| answer(req, counts.clone(), workers.clone(), service);
                    let _ = http1::Builder::new()
                        .half_close(true)
                        .serve_connection(TokioIo::new(stream), service_fn(answer))
                        .await;
                });
            }
        }
    }
}

/// Answers the request: `/hang` never; any other once its work (a task of its own, which
/// a closed connection does not stop) is done.
async fn answer(
    req: hyper::Request<hyper::body::Incoming>,
    counts: Arc<Counts>,
    workers: Arc<Semaphore>,
    service: (Duration, Duration),
) -> Result<hyper::Response<Full<Bytes>>, std::convert::Infallible> {
    let path = req.uri().path().to_owned();
    if path == "/hang" {
        std::future::pending::<()>().await;
    }
    let n = counts.arrived.fetch_add(1, Ordering::SeqCst) as u64;
    let (fastest, slowest) = service;
    let range = (slowest - fastest).as_micros() as u64 + 1;
    let own = match path.as_str() {
        "/slow" => SLOW,
        _ => fastest + Duration::from_micros(n.wrapping_mul(2_654_435_761) % range),
    };
    let _ = tokio::spawn(work(counts, workers, own)).await;
    let html = req
        .headers()
        .get("accept")
        .is_some_and(|a| a.as_bytes().starts_with(b"text/html"));
    let (kind, body) = match html {
        true => (
            "text/html",
            "<!doctype html><title>page</title><p id=served>served</p>",
        ),
        false => ("application/json", "{\"served\":true}"),
    };
    let mut response = hyper::Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    // Its own check of API keys, after the same work: it knows the customers' (`customer-…`).
    if req
        .headers()
        .get("x-api-key")
        .is_some_and(|key| !key.as_bytes().starts_with(b"customer-"))
    {
        *response.status_mut() = hyper::StatusCode::UNAUTHORIZED;
    }
    response.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static(kind),
    );
    Ok(response)
}

/// Holds the request, waits for a worker, works `own`.
async fn work(counts: Arc<Counts>, workers: Arc<Semaphore>, own: Duration) {
    let held = counts.held.fetch_add(1, Ordering::SeqCst) + 1;
    counts.most_held.fetch_max(held, Ordering::SeqCst);
    let worker = workers.acquire().await.expect("the workers stay open");
    tokio::time::sleep(own).await;
    drop(worker);
    counts.held.fetch_sub(1, Ordering::SeqCst);
    counts.served.fetch_add(1, Ordering::SeqCst);
}
