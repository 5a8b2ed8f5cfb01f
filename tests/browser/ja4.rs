//! JA4 on Floodgate's own TLS listener, with real clients: curl, Python's `ssl`, `openssl
//! s_client` and headless Chromium connect through a tap that keeps the ClientHello each sent;
//! the JA4 Floodgate tells the backend (`upstream.ja4_header`) equals what a reference
//! implementation (PyPI's `ja4plus`, tests/ja4/reference.py) computes from those very bytes.
//! Then the identity source `ja4`, `match.ja4`, a trusted proxy's `identity.ja4_header`, and
//! bad first bytes on the TLS port.

use crate::common;

use common::browser::Plan;
use common::certs::make_certificates;
use common::pytools::python;
use common::tap::Tap;
use common::{free_port, Proxy, Upstream};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A proxy with a TLS listener (its certificates in `_dir`) telling the backend each request's
/// JA4 in `x-ja4`.
struct TlsProxy {
    upstream: Upstream,
    proxy: Proxy,
    tls_port: u16,
    _dir: tempfile::TempDir,
}

impl TlsProxy {
    fn start(extra: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        make_certificates(dir.path());
        let file = |name: &str| dir.path().join(name).display().to_string();
        let upstream = Upstream::start();
        let tls_port = free_port();
        let server = format!(
            "tls_listen = \"127.0.0.1:{tls_port}\"\ntls_cert_file = \"{}\"\n\
             tls_key_file = \"{}\"\naccess_log = true\nheader_timeout = \"2s\"",
            file("server.pem"),
            file("server.key")
        );
        let extra = format!("ja4_header = \"x-ja4\"\n{extra}");
        let proxy = Proxy::start_with_server(&[&upstream.addr], &server, &extra);
        Self {
            upstream,
            proxy,
            tls_port,
            _dir: dir,
        }
    }

    /// The JA4 the backend was told for the last request; panics if none.
    fn told(&self) -> String {
        let told = self.upstream.last_header("x-ja4");
        assert_eq!(told.len(), 1, "one x-ja4 header: {told:?}");
        told[0].clone()
    }
}

/// A real client that GETs `url` (https) once: its name and how to run it.
type Client = (&'static str, fn(&str) -> u16);

const CLIENTS: [Client; 4] = [
    ("curl", curl),
    ("python", python_ssl),
    ("openssl", openssl_s_client),
    ("chromium", chromium),
];

fn curl(url: &str) -> u16 {
    let out = Command::new("curl")
        .args([
            "-sk",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--max-time",
            "10",
            url,
        ])
        .output()
        .expect("curl runs");
    String::from_utf8_lossy(&out.stdout).parse().unwrap_or(0)
}

/// Python's `ssl` with its default client context (certificate checks off), HTTP/1.1 by hand.
fn python_ssl(url: &str) -> u16 {
    let script = r#"
import socket, ssl, sys
host, port = sys.argv[1].split("//")[1].strip("/").split(":")
context = ssl.create_default_context()
context.check_hostname = False
context.verify_mode = ssl.CERT_NONE
with socket.create_connection((host, int(port)), timeout=10) as raw:
    with context.wrap_socket(raw) as tls:
        tls.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        print(tls.recv(100).split(b" ")[1].decode())
"#;
    run_status(Command::new("python3").args(["-c", script, url]), None)
}

/// `openssl s_client`, the request written on its standard input.
fn openssl_s_client(url: &str) -> u16 {
    let address = url.trim_start_matches("https://").trim_end_matches('/');
    let request = b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    run_status(
        Command::new("openssl").args(["s_client", "-connect", address, "-quiet"]),
        Some(request),
    )
}

fn chromium(url: &str) -> u16 {
    let report = Plan::new().insecure_certs().visit(url).run();
    report.steps.last().and_then(|s| s.status).unwrap_or(0)
}

/// Runs `command` (writing `input` to it), and reads the status of the HTTP response it
/// printed: the number after the first `HTTP/1.1 ` or alone on the first line.
fn run_status(command: &mut Command, input: Option<&[u8]>) -> u16 {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the client starts");
    let mut stdin = child.stdin.take().unwrap();
    if let Some(input) = input {
        stdin.write_all(input).unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().expect("the client ends");
    let text = String::from_utf8_lossy(&out.stdout);
    let status = match text.find("HTTP/1.1 ") {
        Some(at) => &text[at + 9..],
        None => &text[..],
    };
    status.get(..3).and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// The reference JA4 of `first`, a connection's first bytes.
fn reference(first: &[u8]) -> String {
    let hex: String = first.iter().map(|b| format!("{b:02x}")).collect();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/ja4/reference.py");
    let mut child = Command::new(python())
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the reference runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(hex.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the reference failed");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The JA4 Floodgate told the backend for `client`'s request through `tap`, checked against
/// the reference's for every connection the client made.
fn checked_ja4(proxy: &TlsProxy, tap: &Tap, (name, client): Client) -> String {
    tap.clear();
    let url = format!("https://127.0.0.1:{}/", tap.port);
    assert_eq!(client(&url), 200, "{name} got its page");
    let told = proxy.told();
    let firsts: Vec<Vec<u8>> = tap.firsts().into_iter().filter(|f| !f.is_empty()).collect();
    assert!(!firsts.is_empty(), "{name}: no ClientHello captured");
    for first in firsts {
        assert_eq!(
            reference(&first),
            told,
            "{name}: Floodgate's JA4 is the reference's"
        );
    }
    told
}

#[test]
fn each_real_client_gets_the_reference_ja4_the_same_on_every_connection() {
    let proxy = TlsProxy::start("");
    let tap = Tap::start(proxy.tls_port);
    let mut seen = BTreeMap::new();
    for client in CLIENTS {
        let first = checked_ja4(&proxy, &tap, client);
        let again = checked_ja4(&proxy, &tap, client);
        assert_eq!(
            first, again,
            "{}: the same JA4 on a new connection",
            client.0
        );
        eprintln!("{}: {first}", client.0);
        seen.insert(client.0, first);
    }
    assert_ne!(seen["curl"], seen["chromium"], "two clients, two JA4s");
    assert_ne!(seen["curl"], seen["python"], "two clients, two JA4s");
    let log = proxy.proxy.log();
    assert!(log.contains(&format!(" ja4={}", seen["chromium"])), "{log}");
}

#[test]
fn ja4_buckets_callers_and_match_ja4_denies_a_tls_stack() {
    let proxy = TlsProxy::start("");
    let url = format!("https://127.0.0.1:{}/", proxy.tls_port);
    assert_eq!(python_ssl(&url), 200);
    let python_ja4 = proxy.told();
    let policies = format!(
        "\n[[policy]]\nname = \"scraper-kit\"\naction = \"deny\"\n\
         match = {{ ja4 = [\"{python_ja4}\"] }}\n\n\
         [[policy]]\nname = \"per-stack\"\ncapacity = 3\nrate = \"1/h\"\nsources = [\"ja4\"]\n"
    );
    proxy
        .proxy
        .rewrite_config(|config| config.to_owned() + &policies);
    proxy.proxy.reload("success");
    for _ in 0..3 {
        assert_eq!(curl(&url), 200);
    }
    assert_eq!(curl(&url), 429, "curl's TLS stack spent its bucket");
    assert_eq!(python_ssl(&url), 403, "the denied TLS stack");
    assert_eq!(
        openssl_s_client(&url),
        200,
        "another TLS stack, another bucket"
    );
    let log = proxy.proxy.log();
    assert!(log.contains("policy=scraper-kit"), "{log}");
}

#[test]
fn a_trusted_proxy_tells_the_ja4_and_a_client_cannot() {
    const TOLD: &str = "t13d1516h2_8daaf6152771_02713d6af862";
    let upstream = Upstream::start();
    let identity = |trusted: &str| {
        format!(
            "ja4_header = \"x-ja4\"\n\n[identity]\nja4_header = \"x-client-ja4\"\n\
             [identity.ip]\ntrusted_proxies = [\"{trusted}\"]\n"
        )
    };
    let trusting = Proxy::start(&[&upstream.addr], &identity("127.0.0.1/32"));
    let told = |proxy: &Proxy, headers: &[(&str, &str)]| {
        assert_eq!(proxy.get("/", headers).status(), 200);
        upstream.last_header("x-ja4")
    };
    assert_eq!(told(&trusting, &[("x-client-ja4", TOLD)]), [TOLD]);
    let upper = TOLD.to_uppercase();
    assert_eq!(told(&trusting, &[("x-client-ja4", &upper)]), [TOLD]);
    assert!(told(&trusting, &[("x-client-ja4", "junk")]).is_empty());
    assert!(
        told(&trusting, &[("x-ja4", TOLD)]).is_empty(),
        "a client's own is removed"
    );
    let untrusting = Proxy::start(&[&upstream.addr], &identity("10.0.0.0/8"));
    assert!(told(&untrusting, &[("x-client-ja4", TOLD)]).is_empty());
    assert!(told(&untrusting, &[("x-ja4", TOLD)]).is_empty());
}

/// Whether the server closes `stream` within `limit` (its reads end or fail).
fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    stream.set_read_timeout(Some(limit)).unwrap();
    let started = Instant::now();
    let mut buf = [0u8; 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return started.elapsed() < limit,
        }
    }
}

#[test]
fn bad_first_bytes_and_split_hellos_on_the_tls_port() {
    let proxy = TlsProxy::start("");
    let url = format!("https://127.0.0.1:{}/", proxy.tls_port);
    assert_eq!(curl(&url), 200);
    let curl_ja4 = proxy.told();

    // A ClientHello cut into records of 64 bytes: put back together, the same JA4.
    let splitting = Tap::start_splitting(proxy.tls_port, Some(64));
    let split_url = format!("https://127.0.0.1:{}/", splitting.port);
    assert_eq!(curl(&split_url), 200);
    assert_eq!(proxy.told(), curl_ja4);
    let hello = splitting.firsts().remove(0);

    let connect = || TcpStream::connect(("127.0.0.1", proxy.tls_port)).unwrap();
    // Plain HTTP on the TLS port: closed.
    let mut plain = connect();
    plain
        .write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    assert!(closed_within(&mut plain, Duration::from_secs(5)));
    // A truncated ClientHello, then nothing more: closed.
    let mut truncated = connect();
    truncated.write_all(&hello[..hello.len() / 2]).unwrap();
    truncated.shutdown(std::net::Shutdown::Write).unwrap();
    assert!(closed_within(&mut truncated, Duration::from_secs(5)));
    // Half a ClientHello, the connection held open: closed at the head deadline (2 s).
    let mut stalled = connect();
    stalled.write_all(&hello[..40]).unwrap();
    assert!(closed_within(&mut stalled, Duration::from_secs(6)));
    // Garbage that looks like a record: closed.
    let mut garbage = connect();
    garbage
        .write_all(b"\x16\x03\x01\x00\x05\x01\x00\x00\x01\xff")
        .unwrap();
    assert!(closed_within(&mut garbage, Duration::from_secs(5)));

    assert_eq!(curl(&url), 200, "the server lives on");
    assert_eq!(proxy.told(), curl_ja4);
}
