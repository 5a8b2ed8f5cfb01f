//! Let's Encrypt's test CA on free loopback ports: Debian's `pebble` (the ACME server) and
//! `pebble-challtestsrv` (the DNS it resolves every name with, answering 127.0.0.1), so the
//! challenges of any name reach a listener of this test. Both are killed and reaped when
//! dropped. pebble keeps its defaults otherwise: it refuses ~5 % of good nonces on purpose.

use super::certs::make_certificates;
use super::free_port;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A running pebble and its DNS server.
pub struct Pebble {
    pebble: Option<Child>,
    dns: Option<Child>,
    dir: tempfile::TempDir,
    /// The ACME API's port (`directory()`).
    pub port: u16,
    /// Where pebble validates http-01 challenges: 127.0.0.1 on this port.
    pub http_port: u16,
    /// Where pebble validates tls-alpn-01 challenges: 127.0.0.1 on this port.
    pub tls_port: u16,
    root_pem: String,
}

/// The ports of one attempt to start.
#[derive(Clone, Copy)]
struct Ports {
    acme: u16,
    management: u16,
    http: u16,
    tls: u16,
    dns: u16,
    dns_management: u16,
}

impl Ports {
    fn free() -> Self {
        Ports {
            acme: free_port(),
            management: free_port(),
            http: free_port(),
            tls: free_port(),
            dns: free_port(),
            dns_management: free_port(),
        }
    }
}

impl Pebble {
    /// Starts the DNS server and pebble, retrying with other ports if one was taken; returns
    /// once the directory and the issuing root are served.
    pub fn start() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        make_certificates(dir.path());
        let mut pebble = Pebble {
            pebble: None,
            dns: None,
            dir,
            port: 0,
            http_port: 0,
            tls_port: 0,
            root_pem: String::new(),
        };
        for _ in 0..3 {
            match pebble.launch(Ports::free()) {
                Ok(()) => return pebble,
                Err(why) => {
                    pebble.kill_all();
                    eprintln!("pebble did not start ({why}), trying other ports");
                }
            }
        }
        panic!(
            "pebble did not start (scripts/test installs Debian's pebble):\n{}\n{}",
            pebble.log("pebble.log"),
            pebble.log("challtestsrv.log")
        );
    }

    fn launch(&mut self, ports: Ports) -> Result<(), String> {
        self.dns = Some(self.spawn_dns(ports)?);
        self.wait_for_dns(ports)?;
        std::fs::write(
            self.file("pebble.json"),
            pebble_config(ports, self.dir.path()),
        )
        .map_err(|e| e.to_string())?;
        self.pebble = Some(self.spawn_pebble(ports)?);
        (self.port, self.http_port, self.tls_port) = (ports.acme, ports.http, ports.tls);
        self.root_pem = self.wait_for_root(ports)?;
        Ok(())
    }

    fn spawn_dns(&self, ports: Ports) -> Result<Child, String> {
        let log =
            std::fs::File::create(self.file("challtestsrv.log")).map_err(|e| e.to_string())?;
        Command::new("pebble-challtestsrv")
            .args(["-defaultIPv6", "", "-defaultIPv4", "127.0.0.1"])
            .args(["-dns01", &format!("127.0.0.1:{}", ports.dns)])
            .args([
                "-management",
                &format!("127.0.0.1:{}", ports.dns_management),
            ])
            .args(["-http01", "", "-https01", "", "-tlsalpn01", ""])
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("pebble-challtestsrv: {e}"))
    }

    fn spawn_pebble(&self, ports: Ports) -> Result<Child, String> {
        let log = std::fs::File::create(self.file("pebble.log")).map_err(|e| e.to_string())?;
        Command::new("pebble")
            .arg("-config")
            .arg(self.file("pebble.json"))
            .args(["-dnsserver", &format!("127.0.0.1:{}", ports.dns)])
            .env("PEBBLE_VA_NOSLEEP", "1")
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("pebble: {e}"))
    }

    /// The DNS server is up once its TCP DNS and management ports accept.
    fn wait_for_dns(&mut self, ports: Ports) -> Result<(), String> {
        poll_until("pebble-challtestsrv", &mut self.dns, || {
            let up = |port| TcpStream::connect(("127.0.0.1", port)).is_ok();
            up(ports.dns)
                .then_some(())
                .filter(|_| up(ports.dns_management))
        })
    }

    /// pebble is up once its directory answers and its management API hands out the root.
    fn wait_for_root(&mut self, ports: Ports) -> Result<String, String> {
        let client = self.api_client();
        let get = |url: String| {
            client
                .get(url)
                .send()
                .ok()
                .filter(|r| r.status() == 200)?
                .text()
                .ok()
        };
        poll_until("pebble", &mut self.pebble, || {
            get(format!("https://127.0.0.1:{}/dir", ports.acme))?;
            get(format!("https://127.0.0.1:{}/roots/0", ports.management))
                .filter(|pem| pem.contains("BEGIN CERTIFICATE"))
        })
    }

    /// An HTTPS client trusting only the CA of pebble's own API certificate.
    fn api_client(&self) -> reqwest::blocking::Client {
        let ca = std::fs::read(self.ca_file()).expect("the API's CA");
        reqwest::blocking::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(&ca).expect("a PEM CA"))
            .timeout(Duration::from_secs(2))
            .build()
            .expect("client")
    }

    /// The ACME directory URL.
    pub fn directory(&self) -> String {
        format!("https://127.0.0.1:{}/dir", self.port)
    }

    /// The CA of pebble's own HTTPS certificate (for 127.0.0.1 and localhost): the roots an
    /// ACME client must trust to talk to pebble (`tls.acme.ca_file`, `LEGO_CA_CERTIFICATES`).
    pub fn ca_file(&self) -> PathBuf {
        self.file("ca.pem")
    }

    /// pebble's issuing root (PEM), read from its management API (`/roots/0`) at the start:
    /// what a client trusts to verify the certificates pebble issued. A new one every run.
    pub fn root_pem(&self) -> &str {
        &self.root_pem
    }

    /// Binds pebble's http-01 port now, so the challenges pebble sends wait in the backlog
    /// until `HttpPort::forward_to` names the listener that answers them.
    pub fn bind_http_port(&self) -> HttpPort {
        HttpPort(TcpListener::bind(("127.0.0.1", self.http_port)).expect("bind the http-01 port"))
    }

    /// Stops the ACME server (the DNS server stays): the CA is down from now on.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.pebble.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// pebble's log so far.
    pub fn pebble_log(&self) -> String {
        self.log("pebble.log")
    }

    fn kill_all(&mut self) {
        self.stop();
        if let Some(mut child) = self.dns.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.file(name)).unwrap_or_default()
    }
}

impl Drop for Pebble {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// pebble's config: its API and management listeners, its HTTPS certificate, and the ports
/// it validates challenges on.
fn pebble_config(ports: Ports, dir: &Path) -> String {
    serde_json::json!({
        "pebble": {
            "listenAddress": format!("127.0.0.1:{}", ports.acme),
            "managementListenAddress": format!("127.0.0.1:{}", ports.management),
            "certificate": dir.join("server.pem"),
            "privateKey": dir.join("server.key"),
            "httpPort": ports.http,
            "tlsPort": ports.tls,
            "ocspResponderURL": "",
            "externalAccountBindingRequired": false
        }
    })
    .to_string()
}

/// Polls `ready` every 50 ms for up to 20 s while `child` runs.
fn poll_until<T>(
    what: &str,
    child: &mut Option<Child>,
    mut ready: impl FnMut() -> Option<T>,
) -> Result<T, String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Some(Ok(Some(status))) = child.as_mut().map(|c| c.try_wait()) {
            return Err(format!("{what} exited: {status}"));
        }
        if let Some(value) = ready() {
            return Ok(value);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(format!("{what} not ready within 20 s"))
}

/// pebble's http-01 port, bound, not yet forwarded.
pub struct HttpPort(TcpListener);

impl HttpPort {
    /// Forwards every connection to `127.0.0.1:target` (a proxy's HTTP listener, whose port
    /// is chosen when it starts), until the returned handle is dropped.
    pub fn forward_to(self, target: u16) -> Forward {
        let port = self.0.local_addr().expect("address").port();
        let stopped = Arc::new(AtomicBool::new(false));
        let flag = stopped.clone();
        let thread = std::thread::spawn(move || {
            for inbound in self.0.incoming() {
                if flag.load(Ordering::SeqCst) {
                    return;
                }
                if let Ok(inbound) = inbound {
                    std::thread::spawn(move || relay(inbound, target));
                }
            }
        });
        Forward {
            port,
            stopped,
            thread: Some(thread),
        }
    }
}

/// A running forward from pebble's http-01 port; stops accepting when dropped.
pub struct Forward {
    port: u16,
    stopped: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Forward {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
        // Wakes the blocked accept so the thread sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Copies both ways between `inbound` and a new connection to `127.0.0.1:target`.
fn relay(inbound: TcpStream, target: u16) {
    let Ok(outbound) = TcpStream::connect(("127.0.0.1", target)) else {
        return;
    };
    let (Ok(inbound_copy), Ok(outbound_copy)) = (inbound.try_clone(), outbound.try_clone()) else {
        return;
    };
    let back = std::thread::spawn(move || pump(outbound_copy, inbound_copy));
    pump(inbound, outbound);
    let _ = back.join();
}

/// Copies `from` into `to` until end of stream, then half-closes `to`.
fn pump(mut from: TcpStream, mut to: TcpStream) {
    let mut buf = [0u8; 16 * 1024];
    while let Ok(n @ 1..) = from.read(&mut buf) {
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}
