//! A small demo backend: answers every request with 200 and a short text naming it. The quick
//! start (`scripts/run`) and the outside judges run it in front of nothing; it is built on the
//! proxy's own HTTP stack (pingora), so building it costs nothing more than Floodgate does.
//! usage: floodgate-demo-backend [ADDRESS]   (default 127.0.0.1:8000); `--help` says so, and
//! anything else that is not an address gets the usage line and exit status 2.

use async_trait::async_trait;
use http::Response;
use pingora::apps::http_app::ServeHttp;
use pingora::protocols::http::ServerSession;
use pingora::server::configuration::ServerConf;
use pingora::server::Server;
use pingora::services::listening::Service;
use std::net::{SocketAddr, TcpListener};
use std::process::ExitCode;

/// The one line of usage, printed for `--help` and after a bad argument.
const USAGE: &str = "usage: floodgate-demo-backend [ADDRESS]   (default 127.0.0.1:8000)";

/// Where the backend listens when no address is given.
const DEFAULT_ADDRESS: &str = "127.0.0.1:8000";

/// What the command line asks for.
enum Command {
    Help,
    Serve(SocketAddr),
}

/// Reads the arguments (the program's name taken off); an error is the message to print.
fn command(mut args: impl Iterator<Item = String>) -> Result<Command, String> {
    let first = args.next();
    if let Some(extra) = args.next() {
        return Err(format!("one address at most, not also `{extra}`"));
    }
    let text = match first.as_deref() {
        None => DEFAULT_ADDRESS,
        Some("-h" | "--help") => return Ok(Command::Help),
        Some(flag) if flag.starts_with('-') => return Err(format!("unknown option `{flag}`")),
        Some(text) => text,
    };
    text.parse()
        .map(Command::Serve)
        .map_err(|_| format!("`{text}` is not an address like 127.0.0.1:8000"))
}

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

fn main() -> ExitCode {
    let addr = match command(std::env::args().skip(1)) {
        Ok(Command::Serve(addr)) => addr,
        Ok(Command::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("floodgate-demo-backend: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    // Pingora panics in a worker thread and hangs when it cannot listen: try first.
    if let Err(e) = TcpListener::bind(addr) {
        eprintln!("floodgate-demo-backend: cannot listen on {addr}: {e}");
        return ExitCode::FAILURE;
    }
    serve(addr)
}

/// Serves [`Hello`] on `addr` until stopped.
fn serve(addr: SocketAddr) -> ExitCode {
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
    service.add_tcp(&addr.to_string());
    server.add_service(service);
    eprintln!("backend: listening on {addr}");
    server.run_forever();
}
