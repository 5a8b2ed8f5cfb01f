//! A plain pingora reverse proxy with no limiting: the baseline (a) of `bench/run`.
//! usage: passthrough LISTEN BACKEND THREADS

use async_trait::async_trait;
use pingora::prelude::HttpPeer;
use pingora::proxy::{ProxyHttp, Session};
use pingora::server::configuration::{Opt, ServerConf};
use pingora::server::Server;

struct Passthrough {
    backend: String,
}

#[async_trait]
impl ProxyHttp for Passthrough {
    type CTX = ();

    fn new_ctx(&self) -> Self::CTX {}

    async fn upstream_peer(
        &self,
        _session: &mut Session,
        _ctx: &mut (),
    ) -> pingora::Result<Box<HttpPeer>> {
        Ok(Box::new(HttpPeer::new(
            self.backend.as_str(),
            false,
            String::new(),
        )))
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(listen), Some(backend), Some(threads)) = (args.next(), args.next(), args.next())
    else {
        eprintln!("usage: passthrough LISTEN BACKEND THREADS");
        std::process::exit(2);
    };
    // A benchmark's baseline: on SIGTERM it ends at once rather than after pingora's
    // five-minute grace period, so the script that started it is not kept waiting.
    let conf = ServerConf {
        threads: threads.parse().unwrap_or(2),
        grace_period_seconds: Some(0),
        graceful_shutdown_timeout_seconds: Some(1),
        ..ServerConf::default()
    };
    let mut server = Server::new_with_opt_and_conf(Opt::default(), conf);
    server.bootstrap();
    let mut proxy =
        pingora::proxy::http_proxy_service(&server.configuration, Passthrough { backend });
    proxy.add_tcp(&listen);
    server.add_service(proxy);
    server.run_forever();
}
