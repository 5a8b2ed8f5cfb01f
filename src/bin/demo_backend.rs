//! A small demo backend: answers every request with 200 and a short text naming it. The quick
//! start (`scripts/run`) and the outside judges run it in front of nothing; it is built on the
//! proxy's own HTTP stack (pingora), so building it costs nothing more than Floodgate does.
//! usage: floodgate-demo-backend [ADDRESS]   (default 127.0.0.1:8000)

use async_trait::async_trait;
use http::Response;
use pingora::apps::http_app::ServeHttp;
use pingora::protocols::http::ServerSession;
use pingora::server::configuration::ServerConf;
use pingora::server::Server;
use pingora::services::listening::Service;

/// Says hello.
struct Hello;

#[async_trait]
impl ServeHttp for Hello {
    async fn response(&self, session: &mut ServerSession) -> Response<Vec<u8>> {
        let req = session.req_header();
        let body = format!("hello from the backend: {} {}\n", req.method, req.uri).into_bytes();
        Response::builder()
            .status(200)
            .header("content-type", "text/plain")
            .header("content-length", body.len())
            .body(body)
            .unwrap_or_default()
    }
}

fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8000".to_owned());
    // A demo has nothing to drain: SIGTERM stops it at once (pingora waits 5 minutes by
    // default).
    let conf = ServerConf {
        grace_period_seconds: Some(0),
        graceful_shutdown_timeout_seconds: Some(1),
        ..ServerConf::default()
    };
    let mut server =
        Server::new_with_opt_and_conf(None::<pingora::server::configuration::Opt>, conf);
    server.bootstrap();
    let mut service = Service::new("demo backend".to_owned(), Hello);
    service.threads = Some(2);
    service.add_tcp(&addr);
    server.add_service(service);
    eprintln!("backend: listening on {addr}");
    server.run_forever();
}
