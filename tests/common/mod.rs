//! Test harness: a real upstream HTTP server, the real `floodgate` binary on free ports, and a
//! real HTTP client. Everything started here is stopped by its handle when dropped.
//! `grpc.rs` (tonic) and `ws.rs` (tokio-tungstenite) are included only by the tests that use
//! them (`#[path]`), so the other test binaries do not build those crates in.
#![allow(dead_code)]

pub mod browser;
pub mod capacity;
pub mod certs;
pub mod cluster;
pub mod control_api;
pub mod crowdsec;
pub mod difftest;
pub mod dns;
pub mod fleet;
pub mod front;
pub mod geo;
pub mod keyed;
pub mod load;
pub mod otlp;
pub mod pebble;
pub mod prometheus;
pub mod pytools;
pub mod raw;
pub mod redis;
pub mod relay;
pub mod scripted;
pub mod sentinel;
pub mod serial;
pub mod tap;
mod upstream;
pub mod visitor;
pub mod wait;

#[allow(unused_imports)]
pub use upstream::{Health, Upstream};

use reqwest::blocking::{Client, Response};
use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One policy, `per-user`: 5 requests a minute per `x-api-key`, or per address without one.
pub const PER_USER: &str = r#"
[identity]
sources = ["header:x-api-key", "ip"]

[[policy]]
name = "per-user"
capacity = 5
rate = "1/m"
"#;

/// Overload protection with 8 requests in flight per pool, and `/feed` at priority `low`
/// (what the `shed` switch sheds at once).
pub const LOW_FEEDS: &str = r#"
[[policy]]
name = "feeds"
match = { path_prefix = "/feed" }
priority = "low"

[overload]
max_in_flight = 8
"#;

/// A port nothing listens on right now, below the OS's ephemeral range (32768 and up), so no
/// outgoing connection takes it before its server binds it, and never one this test process
/// handed out before: listeners set SO_REUSEPORT, so two of ours given the same port would
/// silently share its connections. Each process walks the range from its own random place,
/// so test binaries run side by side (scripts/test-binaries) do not pick the same ports.
pub fn free_port() -> u16 {
    const FIRST: u32 = 20_000;
    const COUNT: u32 = 12_000;
    static NEXT: Mutex<Option<u32>> = Mutex::new(None);
    let mut next = NEXT.lock().unwrap_or_else(|e| e.into_inner());
    let mut at = next.unwrap_or_else(|| {
        use std::hash::{BuildHasher, RandomState};
        let seed = RandomState::new().hash_one(std::process::id());
        (seed % u64::from(COUNT)) as u32
    });
    for _ in 0..COUNT {
        let port = (FIRST + at) as u16;
        at = (at + 1) % COUNT;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            *next = Some(at);
            return port;
        }
    }
    panic!("no free port in {FIRST}..{}", FIRST + COUNT);
}

/// An HTTP client whose connections leave from `address` (127.0.0.2, 127.0.1.5, …: loopback
/// too), so address bans and ranges can be tested.
pub fn client_from(address: &str) -> Client {
    Client::builder()
        .local_address(address.parse::<std::net::IpAddr>().ok())
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client")
}

/// The floodgate binary built for these tests, or the one `FLOODGATE_BIN` names (a build of
/// another commit, for a before-and-after run: `bench/distant`).
pub fn floodgate_bin() -> &'static str {
    static BIN: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        std::env::var("FLOODGATE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_floodgate").into())
    });
    &BIN
}

/// A running proxy process and its config file.
pub struct Proxy {
    child: Child,
    _dir: tempfile::TempDir,
    pub config_path: PathBuf,
    pub port: u16,
    pub admin_port: u16,
    client: Client,
}

impl Proxy {
    /// Starts a proxy in front of `backends`; `extra` is appended to the generated config
    /// (policies, identity, store…). Retries with other ports if one was taken meanwhile.
    pub fn start(backends: &[&str], extra: &str) -> Self {
        Self::start_with_server(backends, "", extra)
    }

    /// Like `start`, with `server_extra` added to the generated `[server]` table.
    pub fn start_with_server(backends: &[&str], server_extra: &str, extra: &str) -> Self {
        Self::start_with_tables(backends, server_extra, "", extra)
    }

    /// Like `start`, with `server_extra` and `admin_extra` added to the generated `[server]`
    /// and `[admin]` tables.
    pub fn start_with_tables(
        backends: &[&str],
        server_extra: &str,
        admin_extra: &str,
        extra: &str,
    ) -> Self {
        let mut last_log = String::new();
        for _ in 0..3 {
            match Self::try_start(backends, server_extra, admin_extra, extra) {
                Ok(proxy) => return proxy,
                Err(log) => last_log = log,
            }
        }
        panic!("the proxy did not start:\n{last_log}");
    }

    fn try_start(
        backends: &[&str],
        server_extra: &str,
        admin_extra: &str,
        extra: &str,
    ) -> Result<Self, String> {
        let (port, admin_port) = (free_port(), free_port());
        let dir = tempfile::tempdir().expect("temp dir");
        let config_path = dir.path().join("floodgate.toml");
        let backends: Vec<String> = backends.iter().map(|b| format!("\"{b}\"")).collect();
        // The pid file in the test's directory (read from the config's), gone with it.
        let pid_file = match server_extra.contains("pid_file") {
            true => "",
            false => "pid_file = \"floodgate.pid\"\n",
        };
        let config = format!(
            "[server]\nlisten = \"127.0.0.1:{port}\"\nthreads = 2\nshutdown_timeout = \"1s\"\n{pid_file}{server_extra}\n\n\
             [admin]\nlisten = \"127.0.0.1:{admin_port}\"\n{admin_extra}\n\n\
             [upstream]\nbackends = [{}]\nconnect_timeout = \"1s\"\n\n{extra}\n",
            backends.join(", ")
        );
        std::fs::File::create(&config_path)
            .and_then(|mut f| f.write_all(config.as_bytes()))
            .expect("write config");
        let log_path = dir.path().join("floodgate.log");
        let log = std::fs::File::create(&log_path).expect("log file");
        let child = Command::new(floodgate_bin())
            .arg("--config")
            .arg(&config_path)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn floodgate");
        let client = Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .expect("client");
        let mut proxy = Proxy {
            child,
            _dir: dir,
            config_path,
            port,
            admin_port,
            client,
        };
        if proxy.wait_ready(&log_path) {
            Ok(proxy)
        } else {
            Err(std::fs::read_to_string(&log_path).unwrap_or_default())
        }
    }

    fn wait_ready(&mut self, log_path: &Path) -> bool {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            let admin_up = self
                .admin("/healthz")
                .map(|r| r.status() == 200)
                .unwrap_or(false);
            let proxy_up = std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok();
            if admin_up && proxy_up {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!("{}", std::fs::read_to_string(log_path).unwrap_or_default());
        false
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// GET `path` with the given headers.
    pub fn get(&self, path: &str, headers: &[(&str, &str)]) -> Response {
        let mut req = self.client.get(self.url(path));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send().expect("the proxy answers")
    }

    /// GET `path` on the admin listener.
    pub fn admin(&self, path: &str) -> reqwest::Result<Response> {
        self.client
            .get(format!("http://127.0.0.1:{}{path}", self.admin_port))
            .send()
    }

    /// The value of one series on `/metrics`, 0 if absent.
    pub fn metric(&self, series: &str) -> f64 {
        let text = self
            .admin("/metrics")
            .expect("metrics")
            .text()
            .expect("text");
        series_value(&text, series)
    }

    /// The process id, for signals.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` (e.g. "HUP", "TERM") to the proxy process.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.pid().to_string())
            .status();
        assert!(status.is_ok_and(|s| s.success()), "kill -{signal}");
    }

    /// Sends SIGHUP and waits for the reload counter of `result` (`success`, `failure`) to
    /// move.
    pub fn reload(&self, result: &str) {
        let series = format!("floodgate_config_reloads_total{{result=\"{result}\"}}");
        let before = self.metric(&series);
        self.signal("HUP");
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.metric(&series) == before {
            assert!(Instant::now() < deadline, "no {result} reload counted");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Replaces the config file's text (the harness's server tables stay in front).
    pub fn rewrite_config(&self, edit: impl FnOnce(&str) -> String) {
        let text = std::fs::read_to_string(&self.config_path).expect("read config");
        std::fs::write(&self.config_path, edit(&text)).expect("write config");
    }

    /// Waits until the process has exited, up to `limit`; true if it did.
    pub fn wait_exit(&mut self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// The proxy's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("floodgate.log")).unwrap_or_default()
    }

    /// The proxy's log once `has` holds of it, or as it is after 2 s: a request's access-log
    /// line is written once the request has ended, just after its answer went out.
    pub fn log_when(&self, mut has: impl FnMut(&str) -> bool) -> String {
        let mut log = self.log();
        let deadline = Instant::now() + Duration::from_secs(2);
        while !has(&log) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            log = self.log();
        }
        log
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The status of `GET /x` through `proxy` from `address` (a loopback address), with `key` as
/// `x-api-key` if given.
pub fn status_from(proxy: &Proxy, address: &str, key: Option<&str>) -> u16 {
    let mut req = client_from(address).get(proxy.url("/x"));
    if let Some(key) = key {
        req = req.header("x-api-key", key);
    }
    req.send().expect("the proxy answers").status().as_u16()
}

/// A current-thread tokio runtime for a test's async client.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// The value of `series` (name and labels, as exported) in the Prometheus text `metrics`, 0 if
/// absent.
pub fn series_value(metrics: &str, series: &str) -> f64 {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or(0.0)
}

/// The value of header `name` in `response`, empty if absent or not visible ASCII.
pub fn header(response: &Response, name: &str) -> String {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// `floodgate_requests_total` for one policy and decision.
pub fn requests_series(policy: &str, decision: &str) -> String {
    format!("floodgate_requests_total{{decision=\"{decision}\",policy=\"{policy}\"}}")
}
