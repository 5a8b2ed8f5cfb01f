//! A small demo backend: answers every request with 200 and a short text. Used by the quick
//! start (`scripts/run`) and the benchmarks: `cargo run --example backend -- 127.0.0.1:8000`.

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8000".to_owned());
    let listener = match tokio::net::TcpListener::bind(&addr).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("backend: cannot listen on {addr}: {e}");
            std::process::exit(1);
        }
    };
    eprintln!("backend: listening on {addr}");
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        tokio::spawn(async move {
            let service = service_fn(|req: hyper::Request<hyper::body::Incoming>| async move {
                let body = format!("hello from the backend: {} {}\n", req.method(), req.uri());
                Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::from(body))))
            });
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
