//! A real DNS server on loopback for the reverse-DNS tests: `tests/fixtures/dns_server.py`
//! (dnslib) serving a zone the test writes, on one free port over UDP and TCP, logging every
//! query; and a silent one (a bound UDP socket that reads and drops). Both stop when dropped.

use super::pytools;
use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// One record of the zone: `("127.0.0.5", "PTR", "crawl-5.googlebot.com")`, `("x.test",
/// "A", "127.0.0.5")`, `("x.test", "SERVFAIL", "")`. A name may be an address: it stands for the address's reverse name.
pub type Record<'a> = (&'a str, &'a str, &'a str);

/// A running dnslib server.
pub struct DnsServer {
    child: Child,
    dir: tempfile::TempDir,
    /// Where it answers (UDP and TCP).
    pub addr: SocketAddr,
}

impl DnsServer {
    /// Serves `records` (TTL 300 s) at once.
    pub fn start(records: &[Record<'_>]) -> Self {
        Self::start_with(records, Duration::ZERO)
    }

    /// Serves `records`, holding every answer `delay`.
    pub fn start_with(records: &[Record<'_>], delay: Duration) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let zone: Vec<serde_json::Value> = records
            .iter()
            .map(|(name, kind, value)| {
                serde_json::json!({"name": name, "type": kind, "value": value, "ttl": 300})
            })
            .collect();
        let zone_path = dir.path().join("zone.json");
        std::fs::write(&zone_path, serde_json::to_string(&zone).expect("json")).expect("zone");
        let mut child = Command::new(pytools::python())
            .arg(script())
            .arg(&zone_path)
            .arg(log_path(dir.path()))
            .args(["--address", "127.0.0.1"])
            .args(["--delay", &delay.as_secs_f64().to_string()])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start dns_server.py");
        let port = read_port(&mut child);
        Self {
            child,
            dir,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        }
    }

    /// Every query asked so far, as "NAME TYPE" (`5.0.0.127.in-addr.arpa PTR`).
    pub fn queries(&self) -> Vec<String> {
        std::fs::read_to_string(log_path(self.dir.path()))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for DnsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dns_server.py")
}

fn log_path(dir: &Path) -> PathBuf {
    dir.join("queries.log")
}

/// The "port N" line the server prints once bound.
fn read_port(child: &mut Child) -> u16 {
    let stdout = child.stdout.take().expect("piped stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read the server's port");
    line.trim()
        .strip_prefix("port ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("dns_server.py printed {line:?}, not its port"))
}

/// A DNS server that never answers: a UDP socket that reads every query and drops it.
pub struct SilentDns {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl SilentDns {
    /// Binds a free loopback port and starts dropping.
    pub fn start() -> Self {
        let socket = UdpSocket::bind("127.0.0.1:0").expect("bind udp");
        socket
            .set_read_timeout(Some(Duration::from_millis(50)))
            .expect("read timeout");
        let addr = socket.local_addr().expect("local addr");
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while !stopping.load(Ordering::Relaxed) {
                let _ = socket.recv_from(&mut buf);
            }
        });
        Self {
            addr,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for SilentDns {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
