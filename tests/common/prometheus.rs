//! A real Prometheus server (Debian's package `prometheus`) on a free loopback port, scraping
//! one target every second, asked through its HTTP API; stopped when dropped.

use super::free_port;
use serde_json::Value;
use std::process::{Child, Command, Stdio};

/// A running Prometheus and its storage directory.
pub struct Prometheus {
    child: Child,
    _dir: tempfile::TempDir,
    port: u16,
}

/// What an instant query answered.
#[derive(Debug)]
pub enum Answer {
    /// The query ran: its result's series (empty when none matched).
    Series(Vec<Value>),
    /// Prometheus refused it (`bad_data`: it does not parse) or failed it: its words.
    Refused(String),
    /// Prometheus did not answer (not up yet).
    Unreachable,
}

impl Prometheus {
    /// Starts Prometheus scraping `target` (`host:port`, path `/metrics`) as the job
    /// `floodgate`, every second.
    pub fn start(target: &str) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: floodgate\n    static_configs:\n      - targets: ['{target}']\n"
        );
        std::fs::write(dir.path().join("prometheus.yml"), config).expect("write prometheus.yml");
        let port = free_port();
        let child = Command::new("prometheus")
            .arg(format!(
                "--config.file={}",
                dir.path().join("prometheus.yml").display()
            ))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus (package prometheus; scripts/test installs it)");
        Prometheus {
            child,
            _dir: dir,
            port,
        }
    }

    /// The answer to the instant query `query`.
    pub fn ask(&self, query: &str) -> Answer {
        let url = format!("http://127.0.0.1:{}/api/v1/query", self.port);
        let sent = reqwest::blocking::Client::new()
            .get(url)
            .query(&[("query", query)])
            .send();
        let Ok(body) = sent.and_then(|r| r.json::<Value>()) else {
            return Answer::Unreachable;
        };
        match body["status"].as_str() {
            Some("success") => Answer::Series(
                body["data"]["result"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default(),
            ),
            _ => Answer::Refused(format!("{} {}", body["errorType"], body["error"])),
        }
    }

    /// The value of an instant query's first series, if Prometheus has one.
    pub fn query(&self, query: &str) -> Option<f64> {
        match self.ask(query) {
            Answer::Series(series) => series.first()?["value"][1].as_str()?.parse().ok(),
            _ => None,
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
