//! Floodgate as a front proxy, with real clients: curl and reqwest (HTTP/1.1, h2c with prior
//! knowledge, h2 over TLS by ALPN), a WebSocket client (tokio-tungstenite) and a gRPC client
//! and server (tonic). A failure after the response started aborts it; upgraded connections
//! idle past `read_timeout`; gRPC passes through and a throttled call gets `grpc-status: 8`.

use crate::common;
#[path = "../common/grpc.rs"]
mod grpc;
#[path = "../common/ws.rs"]
mod ws;

use common::certs::make_certificates;
use common::scripted::{Scripted, CUT_AFTER};
use common::{free_port, runtime, Proxy, Upstream};
use futures_util::{SinkExt, StreamExt};
use std::io::{Read, Write};
use std::process::Command;
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

/// Runs curl with `args`: its exit code, what it printed (`-w`), and the body it saved.
fn curl(args: &[&str]) -> (i32, String, Vec<u8>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let body = dir.path().join("body");
    let out = Command::new("curl")
        .args(["-s", "--max-time", "10", "-o"])
        .arg(&body)
        .args(args)
        .output()
        .expect("curl runs");
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    (
        out.status.code().unwrap_or(-1),
        printed,
        std::fs::read(&body).unwrap_or_default(),
    )
}

const ABORTED: &str = "floodgate_upstream_errors_total{kind=\"aborted\"}";

#[test]
fn a_backend_failing_mid_body_aborts_the_response_and_never_rewrites_it() {
    let backend = Scripted::start();
    let proxy = Proxy::start_with_server(&[&backend.addr], "h2c = true", "read_timeout = \"1s\"");
    // A chunked body cut short, a Content-Length body cut short, a stream quiet past
    // read_timeout: each a failed transfer for curl, holding only what the backend sent.
    for (path, sent) in [("/cut", CUT_AFTER), ("/short", CUT_AFTER), ("/quiet", 6)] {
        let (code, status, body) = curl(&["-w", "%{http_code}", &proxy.url(path)]);
        assert_eq!(status, "200", "{path}");
        assert_ne!(code, 0, "{path}: curl must see a failed transfer");
        assert_eq!(body.len(), sent, "{path}: nothing added to the body");
        assert!(
            !String::from_utf8_lossy(&body).contains("problem"),
            "{path}"
        );
    }
    // HTTP/2: the stream is reset.
    let (code, status, body) = curl(&[
        "--http2-prior-knowledge",
        "-w",
        "%{http_code}",
        &proxy.url("/cut"),
    ]);
    assert_eq!((status.as_str(), body.len()), ("200", CUT_AFTER));
    assert_ne!(code, 0, "curl must see the HTTP/2 stream fail");
    assert_eq!(proxy.metric(ABORTED), 4.0);
    let log = proxy.log();
    assert_eq!(
        log.matches("the response was aborted").count(),
        4,
        "logged once each"
    );
    assert!(
        !log.contains("already sent"),
        "nothing written into a started response"
    );
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// How often a client here opens a WebSocket before it gives up.
const WEBSOCKET_ATTEMPTS: u32 = 3;

/// Opens a WebSocket at `url` as caller `key`: the socket and the upgrades it took.
/// pingora 0.9.1 may close an upgraded connection right after its `101` (cloudflare/pingora#946;
/// docs/src/front-proxy.md, *Streams and WebSocket*): the first message then meets the
/// connection's end, and a client reconnects, as this one does after a short pause.
async fn open_websocket(url: &str, key: &str) -> (Socket, u32) {
    for upgrades in 1..=WEBSOCKET_ATTEMPTS {
        let mut request = url.into_client_request().expect("a request");
        request
            .headers_mut()
            .insert("x-api-key", key.parse().expect("a value"));
        let (mut socket, _) = tokio_tungstenite::connect_async(request)
            .await
            .expect("the upgrade goes through");
        if echoes(&mut socket, "hello").await {
            return (socket, upgrades);
        }
        eprintln!("the tunnel closed right after its 101 (pingora#946): reconnecting");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{WEBSOCKET_ATTEMPTS} tunnels in a row closed right after their 101");
}

/// Sends `text` and checks its echo; false if the connection ended first.
async fn echoes(socket: &mut Socket, text: &str) -> bool {
    if socket.send(Message::text(text)).await.is_err() {
        return false;
    }
    let Some(Ok(echoed)) = socket.next().await else {
        return false;
    };
    assert_eq!(echoed.into_text().expect("text").as_str(), text);
    true
}

#[test]
fn an_idle_websocket_outlives_read_timeout_and_its_upgrade_is_one_request() {
    let echo = ws::EchoBackend::start();
    let limits = format!(
        "read_timeout = \"1s\"\n\n[identity]\nsources = [\"header:x-api-key\"]\n\n\
         [[policy]]\nname = \"ws\"\ncapacity = {WEBSOCKET_ATTEMPTS}\nrate = \"1/h\""
    );
    let proxy = Proxy::start(&[&echo.addr], &limits);
    let url = format!("ws://127.0.0.1:{}/chat", proxy.port);
    let upgrades = runtime().block_on(async {
        let (mut socket, upgrades) = open_websocket(&url, "alice").await;
        for n in 0..20 {
            assert!(
                echoes(&mut socket, &format!("message {n}")).await,
                "message {n}"
            );
        }
        // Both directions idle three times read_timeout.
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert!(
            echoes(&mut socket, "still there?").await,
            "after the idle spell"
        );
        let _ = socket.close(None).await;
        upgrades
    });
    // Each upgrade took one of the caller's tokens; the 22 messages took none. A token left
    // lets a plain request through to the echo backend, which answers only upgrades.
    for _ in upgrades..WEBSOCKET_ATTEMPTS {
        assert_eq!(proxy.get("/", &[("x-api-key", "alice")]).status(), 502);
    }
    assert_eq!(proxy.get("/", &[("x-api-key", "alice")]).status(), 429);
    assert_eq!(proxy.metric(ABORTED), 0.0);
}

#[test]
fn h2c_and_h2_over_tls_answer_with_http2_and_https_backends_get_h2() {
    let dir = tempfile::tempdir().expect("temp dir");
    make_certificates(dir.path());
    let file = |name: &str| dir.path().join(name).display().to_string();
    let upstream = Upstream::start();
    let tls_port = free_port();
    let server = format!(
        "h2c = true\nvia = true\ntls_listen = \"127.0.0.1:{tls_port}\"\n\
         tls_cert_file = \"{}\"\ntls_key_file = \"{}\"",
        file("server.pem"),
        file("server.key")
    );
    let proxy = Proxy::start_with_server(&[&upstream.addr], &server, "");

    let (_, version, _) = curl(&[
        "--http2-prior-knowledge",
        "-w",
        "%{http_version}",
        &proxy.url("/"),
    ]);
    assert_eq!(version, "2", "h2c with prior knowledge");
    let client = reqwest::blocking::Client::builder()
        .http2_prior_knowledge()
        .build()
        .expect("client");
    let answer = client.get(proxy.url("/h2c")).send().expect("an answer");
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.version(), reqwest::Version::HTTP_2);
    assert_eq!(upstream.last_header("via"), ["2 floodgate"]);
    assert_eq!(proxy.get("/h1", &[]).version(), reqwest::Version::HTTP_11);

    let tls = format!("https://127.0.0.1:{tls_port}/tls");
    let ca = file("ca.pem");
    let (_, version, _) = curl(&["--http2", "--cacert", &ca, "-w", "%{http_version}", &tls]);
    assert_eq!(version, "2", "h2 by ALPN on the TLS listener");
    assert_eq!(upstream.last_header("x-forwarded-proto"), ["https"]);
    let (_, version, _) = curl(&["--http1.1", "--cacert", &ca, "-w", "%{http_version}", &tls]);
    assert_eq!(version, "1.1");
    assert_eq!(upstream.last_header("x-forwarded-proto"), ["https"]);

    // A proxy in front whose backend is that TLS listener speaks h2 to it (ALPN).
    let front = Proxy::start_with_server(
        &[&format!("https://127.0.0.1:{tls_port}")],
        "via = true",
        &format!("ca_file = \"{ca}\""),
    );
    assert_eq!(front.get("/chain", &[]).status(), 200);
    assert_eq!(upstream.last_header("via"), ["1.1 floodgate, 2 floodgate"]);
}

#[test]
fn with_h2c_the_plain_listener_keeps_its_head_deadline_and_short_requests() {
    let upstream = Upstream::start();
    let proxy =
        Proxy::start_with_server(&[&upstream.addr], "h2c = true\nheader_timeout = \"1s\"", "");
    for opening in ["", "PRI * HT", "GET / HT"] {
        let mut stream = common::raw::connect(proxy.port);
        stream.write_all(opening.as_bytes()).expect("send");
        let started = Instant::now();
        let mut rest = Vec::new();
        let _ = stream.read_to_end(&mut rest);
        let waited = started.elapsed();
        assert!(
            waited < Duration::from_secs(4),
            "{opening:?} held {waited:?}"
        );
    }
    // Shorter than the HTTP/2 preface, and the client waits for the answer.
    let answer = common::raw::exchange(proxy.port, "GET / HTTP/1.0\r\nHost: a\r\n\r\n");
    assert_eq!(common::raw::status(&answer), 200, "{answer}");
}

#[test]
fn grpc_passes_end_to_end_and_a_throttled_call_gets_resource_exhausted() {
    let backend = grpc::GrpcBackend::start();
    let limits = "[identity]\nsources = [\"header:x-api-key\"]\n\n\
                  [[policy]]\nname = \"calls\"\ncapacity = 2\nrate = \"1/h\"";
    let h2c_backend = format!("h2c://{}", backend.addr);
    let proxy = Proxy::start_with_server(&[&h2c_backend], "h2c = true", limits);
    let url = format!("http://127.0.0.1:{}", proxy.port);
    runtime().block_on(async {
        let key = [("x-api-key", "bob")];
        for _ in 0..2 {
            let answer = grpc::say(&url, "world", &key)
                .await
                .expect("the call passes");
            assert_eq!(&answer[..], b"hello world");
        }
        let refused = grpc::say(&url, "world", &key).await.expect_err("throttled");
        assert_eq!(
            refused.code(),
            tonic::Code::ResourceExhausted,
            "{refused:?}"
        );
        assert!(refused.message().contains("exceeded"), "{refused:?}");
        let metadata = refused.metadata();
        let ratelimit = metadata
            .get("ratelimit")
            .expect("RateLimit")
            .to_str()
            .expect("text");
        assert!(ratelimit.starts_with("\"calls\";r=0;t="), "{ratelimit}");
        assert!(metadata.get("retry-after").is_some());
        assert!(metadata.get("x-request-id").is_some());
    });
}
