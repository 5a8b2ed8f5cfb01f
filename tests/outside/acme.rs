//! ACME (issue #65) against Let's Encrypt's test CA (`common/pebble.rs`): Floodgate obtains a
//! certificate by tls-alpn-01 and by http-01 and serves it by SNI, two instances on one Redis
//! place one order and serve the same certificate, a domain added by reload is ordered without
//! a restart, the CA down leaves the certificate serving, and a name with no certificate gets
//! a TLS alert, and a CA whose certificate is not trusted is logged with the TLS reason.
//! Debian's `lego` first proves the harness, so a failure after it is Floodgate's.

use crate::common::pebble::Pebble;
use crate::common::redis::RedisServer;
use crate::common::{free_port, Proxy, Upstream};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::AlertDescription;
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const NAME: &str = "shop.example.test";
const SECOND_NAME: &str = "api.example.test";
/// How long an order may take: seconds when all is well, the rest is for a loaded machine.
const ISSUANCE: Duration = Duration::from_secs(60);
const ISSUED: &str = "floodgate_acme_orders_total{result=\"issued\"}";
const FAILED: &str = "floodgate_acme_orders_total{result=\"failed\"}";

// --- the harness, proven with a reference client ------------------------------------------

#[test]
fn lego_obtains_a_certificate_from_pebble_by_http_01() {
    let pebble = Pebble::start();
    // Through the forward the http-01 tests of Floodgate use: it is part of the harness.
    let lego_port = free_port();
    let _forward = pebble.bind_http_port().forward_to(lego_port);
    let port = format!("127.0.0.1:{lego_port}");
    lego_obtains(&pebble, &["--http", "--http.port", &port]);
}

#[test]
fn lego_obtains_a_certificate_from_pebble_by_tls_alpn_01() {
    let pebble = Pebble::start();
    let port = format!("127.0.0.1:{}", pebble.tls_port);
    lego_obtains(&pebble, &["--tls", "--tls.port", &port]);
}

/// lego orders a certificate for `NAME` from `pebble` answering on `challenge`'s flags; the
/// certificate verifies for `NAME` up to pebble's root from `root_pem()`.
fn lego_obtains(pebble: &Pebble, challenge: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("lego")
        .env("LEGO_CA_CERTIFICATES", pebble.ca_file())
        .args([
            "--server",
            &pebble.directory(),
            "--email",
            "ops@example.test",
        ])
        .args(["--domains", NAME, "--accept-tos", "--path"])
        .arg(dir.path())
        .args(challenge)
        .arg("run")
        .output()
        .expect("run lego (scripts/test installs Debian's lego)");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "lego: {said}\n{}",
        pebble.pebble_log()
    );
    let root = dir.path().join("root.pem");
    std::fs::write(&root, pebble.root_pem()).unwrap();
    let certificates = dir.path().join("certificates");
    let verify = Command::new("openssl")
        .args(["verify", "-verify_hostname", NAME, "-CAfile"])
        .arg(&root)
        .arg("-untrusted")
        .arg(certificates.join(format!("{NAME}.issuer.crt")))
        .arg(certificates.join(format!("{NAME}.crt")))
        .output()
        .expect("openssl");
    let said = String::from_utf8_lossy(&verify.stdout);
    assert!(verify.status.success(), "openssl verify: {said}");
}

// --- Floodgate ------------------------------------------------------------------------------

#[test]
fn a_certificate_obtained_by_tls_alpn_01_is_served_on_the_memory_store() {
    let pebble = Pebble::start();
    let upstream = Upstream::start();
    let state = tempfile::tempdir().unwrap();
    // Only the TLS listener is where pebble validates: nothing answers its http-01 port.
    let proxy = start_on_memory(&pebble, &upstream, pebble.tls_port, state.path(), "");

    let served = wait_for_certificate(&proxy, pebble.tls_port, NAME, pebble.root_pem());
    assert!(!served.is_empty());
    assert_eq!(https_status(pebble.tls_port, NAME, pebble.root_pem()), 200);
    assert_eq!(upstream.served(), 1, "the request crossed to the upstream");
    assert_eq!(proxy.metric(ISSUED), 1.0);
    assert!(proxy.metric(&expiry_series(NAME)) > now_seconds());
    assert_state_is_private(state.path());
}

#[test]
fn a_certificate_obtained_by_http_01_is_served_on_the_memory_store() {
    let pebble = Pebble::start();
    let upstream = Upstream::start();
    let state = tempfile::tempdir().unwrap();
    // Only the HTTP listener is where pebble validates: the TLS listener is elsewhere.
    let http_port = pebble.bind_http_port();
    let tls_port = free_port();
    let challenge = "challenge = \"http-01\"";
    let proxy = start_on_memory(&pebble, &upstream, tls_port, state.path(), challenge);
    let _forward = http_port.forward_to(proxy.port);

    wait_for_certificate(&proxy, tls_port, NAME, pebble.root_pem());
    assert_eq!(https_status(tls_port, NAME, pebble.root_pem()), 200);
    assert_eq!(proxy.metric(ISSUED), 1.0);
    assert_state_is_private(state.path());
}

#[test]
fn two_instances_on_one_redis_place_one_order_and_serve_the_same_certificate() {
    let pebble = Pebble::start();
    let upstream = Upstream::start();
    let redis = RedisServer::start();
    let config = format!(
        "[store]\nkind = \"redis\"\nurl = \"{}\"\n\n{}",
        redis.url(),
        acme_table(&pebble, &[NAME], "")
    );
    // pebble validates on the first instance's TLS port, whichever instance placed the order.
    let first = Proxy::start_with_server(&[&upstream.addr], &tls_listen(pebble.tls_port), &config);
    let second_port = free_port();
    let second = Proxy::start_with_server(&[&upstream.addr], &tls_listen(second_port), &config);

    let on_first = wait_for_certificate(&first, pebble.tls_port, NAME, pebble.root_pem());
    let on_second = wait_for_certificate(&second, second_port, NAME, pebble.root_pem());
    assert_eq!(
        on_first, on_second,
        "both instances serve the one certificate"
    );
    assert_eq!(https_status(second_port, NAME, pebble.root_pem()), 200);
    let issued = first.metric(ISSUED) + second.metric(ISSUED);
    assert_eq!(issued, 1.0, "one order for the fleet");
    assert!(second.metric(&expiry_series(NAME)) > now_seconds());
}

#[test]
fn a_domain_added_by_reload_is_ordered_and_served_without_a_restart() {
    let pebble = Pebble::start();
    let upstream = Upstream::start();
    let state = tempfile::tempdir().unwrap();
    let proxy = start_on_memory(&pebble, &upstream, pebble.tls_port, state.path(), "");
    let first = wait_for_certificate(&proxy, pebble.tls_port, NAME, pebble.root_pem());
    let pid = proxy.pid();

    proxy.rewrite_config(|text| {
        let one = format!("domains = [\"{NAME}\"]");
        text.replace(&one, &format!("domains = [\"{NAME}\", \"{SECOND_NAME}\"]"))
    });
    proxy.reload("success");
    wait_for_certificate(&proxy, pebble.tls_port, SECOND_NAME, pebble.root_pem());
    assert_eq!(
        https_status(pebble.tls_port, SECOND_NAME, pebble.root_pem()),
        200
    );
    assert_eq!(proxy.pid(), pid);
    wait_for_metric(&proxy, ISSUED, |issued| issued == 2.0);
    assert_eq!(
        handshake(pebble.tls_port, NAME, pebble.root_pem()),
        Handshake::Served(first),
        "the first name keeps its certificate"
    );
}

#[test]
fn with_the_ca_down_the_certificate_keeps_serving_and_a_failed_renewal_is_counted() {
    let mut pebble = Pebble::start();
    let upstream = Upstream::start();
    let state = tempfile::tempdir().unwrap();
    let proxy = start_on_memory(&pebble, &upstream, pebble.tls_port, state.path(), "");
    let served = wait_for_certificate(&proxy, pebble.tls_port, NAME, pebble.root_pem());
    let root = pebble.root_pem().to_string();

    pebble.stop();
    let expiry = proxy.metric(&expiry_series(NAME));
    assert!(
        expiry > now_seconds(),
        "the expiry metric is there: {expiry}"
    );
    assert_eq!(https_status(pebble.tls_port, NAME, &root), 200);

    // Renewal due now: renew_before longer than the certificate has left.
    let days_left = ((expiry - now_seconds()) / 86_400.0).ceil() as u64;
    proxy.rewrite_config(|text| {
        let renew = format!("[tls.acme]\nrenew_before = \"{}d\"\n", days_left + 1);
        text.replace("[tls.acme]\n", &renew)
    });
    proxy.reload("success");
    wait_for_metric(&proxy, FAILED, |failed| failed >= 1.0);
    assert_eq!(
        handshake(pebble.tls_port, NAME, &root),
        Handshake::Served(served)
    );
    assert_eq!(https_status(pebble.tls_port, NAME, &root), 200);
    assert_eq!(proxy.metric(ISSUED), 1.0);
    let ready = proxy.admin("/readyz").expect("readyz").status();
    assert_eq!(ready, 200, "ready while the certificate is valid");
}

#[test]
fn a_ca_whose_certificate_is_not_trusted_is_logged_with_the_tls_reason() {
    let pebble = Pebble::start();
    let upstream = Upstream::start();
    let state = tempfile::tempdir().unwrap();
    // No `ca_file`: pebble's API certificate is of a test CA the proxy does not trust.
    let acme = format!(
        "[tls.acme]\ndirectory = \"{}\"\nemail = \"ops@example.test\"\ndomains = [\"{NAME}\"]\n\
         state_dir = \"{}\"\n",
        pebble.directory(),
        state.path().display()
    );
    let server = tls_listen(pebble.tls_port);
    let proxy = Proxy::start_with_server(&[&upstream.addr], &server, &acme);
    let deadline = Instant::now() + ISSUANCE;
    let line = loop {
        let log = proxy.log();
        if let Some(line) = log.lines().find(|l| l.contains(&format!("ACME, `{NAME}`"))) {
            break line.to_owned();
        }
        assert!(Instant::now() < deadline, "no ACME failure logged:\n{log}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        line.contains("invalid peer certificate") && line.contains("UnknownIssuer"),
        "{line}"
    );
}

#[test]
fn a_name_without_a_certificate_gets_a_tls_alert_never_another_names_certificate() {
    let pebble = Pebble::start();
    let upstream = Upstream::start();
    let state = tempfile::tempdir().unwrap();
    let proxy = start_on_memory(&pebble, &upstream, pebble.tls_port, state.path(), "");
    wait_for_certificate(&proxy, pebble.tls_port, NAME, pebble.root_pem());

    // Refusals are logged at most once a second: asked again until the log names this one.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !proxy.log().contains("other.example.test") {
        let other = handshake(pebble.tls_port, "other.example.test", pebble.root_pem());
        assert!(matches!(other, Handshake::Alert(_)), "{other:?}");
        assert!(
            Instant::now() < deadline,
            "no log line names other.example.test"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn no_domains_or_a_bad_email_is_refused_with_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("acme.toml");
    let config = |email: &str, domains: &str| {
        format!(
            "[server]\nlisten = \"127.0.0.1:8080\"\ntls_listen = \"127.0.0.1:8443\"\n\n\
             [upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n\
             [tls.acme]\ndirectory = \"https://127.0.0.1:14000/dir\"\n\
             email = {email}\ndomains = {domains}\nstate_dir = \"{}\"\n",
            dir.path().display()
        )
    };
    let check = |text: String| {
        std::fs::write(&path, text).unwrap();
        Command::new(crate::common::floodgate_bin())
            .arg("--config")
            .arg(&path)
            .arg("--test")
            .output()
            .expect("run floodgate --test")
    };
    let good = check(config("\"ops@example.test\"", &format!("[\"{NAME}\"]")));
    let said = String::from_utf8_lossy(&good.stderr);
    assert!(good.status.success(), "the good config is refused: {said}");

    let bad = [
        (config("\"ops@example.test\"", "[]"), 11, "domain"),
        (
            config("\"not an email\"", &format!("[\"{NAME}\"]")),
            10,
            "email",
        ),
    ];
    for (text, line, key) in bad {
        let out = check(text);
        assert!(!out.status.success(), "{key}: accepted");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let located = stderr
            .strip_prefix(&format!("{}:{line}:", path.display()))
            .and_then(|rest| rest.split_once(": "))
            .is_some_and(|(column, _)| column.parse::<u32>().is_ok());
        assert!(located, "{key}: not file:{line}:column: {stderr}");
        assert!(stderr.to_lowercase().contains(key), "{key}: {stderr}");
    }
}

// --- helpers --------------------------------------------------------------------------------

/// `[tls.acme]` for `domains` from `pebble`, trusting pebble's API, plus `extra` keys.
fn acme_table(pebble: &Pebble, domains: &[&str], extra: &str) -> String {
    let domains: Vec<String> = domains.iter().map(|d| format!("\"{d}\"")).collect();
    format!(
        "[tls.acme]\ndirectory = \"{}\"\nemail = \"ops@example.test\"\ndomains = [{}]\n\
         ca_file = \"{}\"\n{extra}\n",
        pebble.directory(),
        domains.join(", "),
        pebble.ca_file().display()
    )
}

fn tls_listen(port: u16) -> String {
    format!("tls_listen = \"127.0.0.1:{port}\"")
}

/// One proxy on the memory store, its ACME state in `state_dir`, TLS on `tls_port`.
fn start_on_memory(
    pebble: &Pebble,
    upstream: &Upstream,
    tls_port: u16,
    state_dir: &Path,
    acme_extra: &str,
) -> Proxy {
    let extra = format!("state_dir = \"{}\"\n{acme_extra}", state_dir.display());
    let acme = acme_table(pebble, &[NAME], &extra);
    Proxy::start_with_server(&[&upstream.addr], &tls_listen(tls_port), &acme)
}

/// What a TLS client trusting only pebble's root met in a handshake with SNI = a name.
#[derive(Debug, PartialEq)]
enum Handshake {
    /// A certificate valid for the name: its leaf (DER).
    Served(Vec<u8>),
    /// The server ended the handshake with this alert.
    Alert(AlertDescription),
    /// Anything else: nothing listening, a certificate not valid for the name, a timeout…
    Failed(String),
}

/// A TLS handshake with `127.0.0.1:port`, SNI = `name`, trusting only `root_pem`.
fn handshake(port: u16, name: &str, root_pem: &str) -> Handshake {
    let mut roots = rustls::RootCertStore::empty();
    let root = CertificateDer::from_pem_slice(root_pem.as_bytes()).expect("a PEM root");
    roots.add(root).expect("pebble's root");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    let server_name = ServerName::try_from(name.to_string()).expect("a DNS name");
    let mut tls = rustls::ClientConnection::new(Arc::new(config), server_name).expect("client");
    let mut socket = match TcpStream::connect(("127.0.0.1", port)) {
        Ok(socket) => socket,
        Err(e) => return Handshake::Failed(format!("connect: {e}")),
    };
    let _ = socket.set_read_timeout(Some(Duration::from_secs(5)));
    while tls.is_handshaking() {
        if let Err(e) = tls.complete_io(&mut socket) {
            let rustls_error = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>());
            return match rustls_error {
                Some(rustls::Error::AlertReceived(alert)) => Handshake::Alert(*alert),
                _ => Handshake::Failed(e.to_string()),
            };
        }
    }
    match tls.peer_certificates() {
        Some([leaf, ..]) => Handshake::Served(leaf.to_vec()),
        _ => Handshake::Failed("no certificate".into()),
    }
}

/// Polls until `proxy` serves a certificate for `name` on `port`; its leaf (DER).
fn wait_for_certificate(proxy: &Proxy, port: u16, name: &str, root_pem: &str) -> Vec<u8> {
    let deadline = Instant::now() + ISSUANCE;
    loop {
        match handshake(port, name, root_pem) {
            Handshake::Served(leaf) => return leaf,
            other if Instant::now() > deadline => {
                panic!(
                    "no certificate for {name} on {port}: {other:?}\n{}",
                    proxy.log()
                )
            }
            _ => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// The status of GET / over HTTPS from `127.0.0.1:port` as `name`, trusting only `root_pem`.
fn https_status(port: u16, name: &str, root_pem: &str) -> u16 {
    let root = reqwest::Certificate::from_pem(root_pem.as_bytes()).expect("a PEM root");
    let client = reqwest::blocking::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(root)
        .resolve(name, SocketAddr::from(([127, 0, 0, 1], port)))
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client");
    let response = client.get(format!("https://{name}:{port}/")).send();
    response.expect("an HTTPS answer").status().as_u16()
}

/// Polls `series` on `proxy` until `done` holds; its value then.
fn wait_for_metric(proxy: &Proxy, series: &str, done: impl Fn(f64) -> bool) -> f64 {
    let deadline = Instant::now() + ISSUANCE;
    loop {
        let value = proxy.metric(series);
        if done(value) {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "{series} = {value}\n{}",
            proxy.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn expiry_series(domain: &str) -> String {
    format!("floodgate_tls_cert_expiry_seconds{{domain=\"{domain}\"}}")
}

fn now_seconds() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs_f64()
}

/// Every file under `dir` (the account key, certificates and keys) is readable by its owner
/// only.
fn assert_state_is_private(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut files = 0;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        for entry in std::fs::read_dir(&path).expect("read state_dir") {
            let entry = entry.expect("entry");
            let mode = entry.metadata().expect("metadata").permissions().mode();
            if entry.file_type().expect("type").is_dir() {
                pending.push(entry.path());
            } else {
                files += 1;
                assert_eq!(mode & 0o077, 0, "{} is {mode:o}", entry.path().display());
            }
        }
    }
    assert!(files > 0, "the state is kept in {}", dir.display());
}
