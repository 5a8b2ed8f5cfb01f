//! A real OTLP/HTTP trace receiver on loopback: `tests/fixtures/otlp_receiver.py`, decoding
//! with the official `opentelemetry-proto` messages and logging every span it took as JSON;
//! it can answer 500 or slowly. Stopped when dropped.

use super::pytools;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running receiver.
pub struct OtlpReceiver {
    child: Child,
    dir: tempfile::TempDir,
    /// Its base URL (`http://127.0.0.1:N`, no path: Floodgate adds `/v1/traces`).
    pub endpoint: String,
}

impl OtlpReceiver {
    /// Takes every span, at once.
    pub fn start() -> Self {
        Self::start_with(200, Duration::ZERO)
    }

    /// Answers every post with `status` after `delay` (spans are logged only with 200).
    pub fn start_with(status: u16, delay: Duration) -> Self {
        Self::spawn(&[
            "--status",
            &status.to_string(),
            "--delay",
            &delay.as_secs_f64().to_string(),
        ])
    }

    /// Answers every post 200 at once without decoding it (logs nothing): a healthy collector
    /// that costs the machine little.
    pub fn discarding() -> Self {
        Self::spawn(&["--discard"])
    }

    fn spawn(args: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut child = Command::new(pytools::python())
            .arg(script())
            .arg(log_path(dir.path()))
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start otlp_receiver.py");
        let port = read_port(&mut child);
        Self {
            child,
            dir,
            endpoint: format!("http://127.0.0.1:{port}"),
        }
    }

    /// Every span taken so far.
    pub fn spans(&self) -> Vec<Value> {
        std::fs::read_to_string(log_path(self.dir.path()))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// The first span for which `wanted` holds, waiting up to 10 s for it.
    pub fn wait_for(&self, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(span) = self.spans().into_iter().find(&wanted) {
                return span;
            }
            assert!(
                Instant::now() < deadline,
                "no such span arrived; spans: {:#?}",
                self.spans()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/otlp_receiver.py")
}

fn log_path(dir: &Path) -> PathBuf {
    dir.join("spans.jsonl")
}

/// The "port N" line the receiver prints once bound.
fn read_port(child: &mut Child) -> u16 {
    let stdout = child.stdout.take().expect("piped stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read the receiver's port");
    line.trim()
        .strip_prefix("port ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("otlp_receiver.py printed {line:?}, not its port"))
}
