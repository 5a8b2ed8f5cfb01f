//! A small demo backend: answers every request with 200 and a short text. Used by the quick
//! start (`scripts/run`) and the benchmarks; `cargo run --example backend -- 127.0.0.1:8000`.

fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8000".to_owned());
    let server = match tiny_http::Server::http(&addr) {
        Ok(server) => server,
        Err(e) => {
            eprintln!("backend: cannot listen on {addr}: {e}");
            std::process::exit(1);
        }
    };
    eprintln!("backend: listening on {addr}");
    for request in server.incoming_requests() {
        let body = format!(
            "hello from the backend: {} {}\n",
            request.method(),
            request.url()
        );
        if let Err(e) = request.respond(tiny_http::Response::from_string(body)) {
            eprintln!("backend: {e}");
        }
    }
}
