//! TLS on the listener and to an `https://` backend, with a test CA made for the run: a client
//! speaks plain HTTP to proxy A, which forwards over verified TLS to proxy B's TLS listener,
//! which forwards to the upstream.

use crate::common;

use common::certs::make_certificates;
use common::{free_port, Proxy, Upstream};

#[test]
fn tls_works_on_the_listener_and_to_an_https_backend_with_a_test_ca() {
    let dir = tempfile::tempdir().unwrap();
    make_certificates(dir.path());
    let file = |name: &str| dir.path().join(name).display().to_string();
    let upstream = Upstream::start();

    let tls_port = free_port();
    let tls_server = format!(
        "tls_listen = \"127.0.0.1:{tls_port}\"\ntls_cert_file = \"{}\"\ntls_key_file = \"{}\"",
        file("server.pem"),
        file("server.key")
    );
    let back = Proxy::start_with_server(&[&upstream.addr], &tls_server, "");
    let https_backend = format!("https://127.0.0.1:{tls_port}");

    let front = Proxy::start(
        &[&https_backend],
        &format!("ca_file = \"{}\"\n", file("ca.pem")),
    );
    for _ in 0..3 {
        assert_eq!(front.get("/", &[]).status(), 200);
    }
    assert_eq!(upstream.served(), 3, "every request crossed the TLS hop");
    assert!(back.metric("floodgate_upstream_responses_total{class=\"2xx\"}") >= 3.0);

    // Without the test CA the backend's certificate is not trusted: 502, counted.
    let untrusting = Proxy::start(&[&https_backend], "");
    assert_eq!(untrusting.get("/", &[]).status(), 502);
    assert_eq!(upstream.served(), 3);
}
