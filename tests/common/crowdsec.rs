//! A real CrowdSec Local API (Debian's crowdsec 1.4.6, extracted by scripts/test into
//! `FLOODGATE_CROWDSEC_DIR`), run as LAPI only (`-no-cs`) with SQLite, on a free loopback
//! port, no central API; decisions and bouncer keys made with the real `cscli`.

use super::free_port;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Where the extracted package is.
pub fn crowdsec_dir() -> PathBuf {
    match std::env::var_os("FLOODGATE_CROWDSEC_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache/floodgate/crowdsec"),
    }
}

fn binary(name: &str) -> PathBuf {
    let path = crowdsec_dir().join("usr/bin").join(name);
    assert!(
        path.exists(),
        "{} is missing: run scripts/test, which extracts Debian's crowdsec package there",
        path.display()
    );
    path
}

/// A running LAPI, its files and its `cscli`.
pub struct Lapi {
    child: Option<Child>,
    pub dir: tempfile::TempDir,
    pub port: u16,
}

impl Lapi {
    /// LAPI on a free port, with a machine registered for `cscli decisions`.
    pub fn start() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        write_config(dir.path(), port);
        let mut lapi = Self {
            child: None,
            dir,
            port,
        };
        lapi.cscli(&["machines", "add", "-a", "--force"]);
        lapi.restart();
        lapi
    }

    /// The base URL a bouncer is given.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Starts LAPI again (after `kill`), waiting until it answers.
    pub fn restart(&mut self) {
        let log = std::fs::File::create(self.dir.path().join("lapi.log")).expect("log");
        let child = Command::new(binary("crowdsec"))
            .arg("-c")
            .arg(self.config())
            .arg("-no-cs")
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("spawn crowdsec");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "LAPI did not start:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops LAPI (SIGKILL: as it would die).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// A bouncer key `key` named `name`, written to a file in LAPI's directory; its path.
    pub fn bouncer_key(&self, name: &str, key: &str) -> PathBuf {
        self.cscli(&["bouncers", "add", name, "-k", key]);
        let path = self.dir.path().join(format!("{name}.key"));
        std::fs::write(&path, format!("{key}\n")).expect("key file");
        path
    }

    /// Runs `cscli` with `args`, which must succeed.
    pub fn cscli(&self, args: &[&str]) -> Output {
        let out = Command::new(binary("cscli"))
            .arg("-c")
            .arg(self.config())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run cscli");
        assert!(
            out.status.success(),
            "cscli {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Enables what reads nginx's access log: the stock nginx parser, the HTTP enrichers and
    /// the base HTTP scenarios, from the package's hub, as its post-install step would.
    pub fn enable_nginx_collection(&self) {
        let root = crowdsec_dir();
        let hub = root.join("usr/share/crowdsec/hub");
        let cfg = self.dir.path().join("cfg");
        let items = [
            "parsers/s01-parse/crowdsecurity/nginx-logs.yaml",
            "parsers/s02-enrich/crowdsecurity/dateparse-enrich.yaml",
            "parsers/s02-enrich/crowdsecurity/http-logs.yaml",
            "scenarios/crowdsecurity/http-probing.yaml",
            "scenarios/crowdsecurity/http-sensitive-files.yaml",
            "scenarios/crowdsecurity/http-bad-user-agent.yaml",
            "scenarios/crowdsecurity/http-crawl-non_statics.yaml",
            "scenarios/crowdsecurity/http-path-traversal-probing.yaml",
        ];
        for item in items {
            let path = Path::new(item);
            let dir = cfg.join(path.parent().and_then(Path::parent).unwrap());
            std::fs::create_dir_all(&dir).expect("hub dirs");
            let link = dir.join(path.file_name().unwrap());
            std::os::unix::fs::symlink(hub.join(item), link).expect("enable a hub item");
        }
        // Debian's 1.4.6 hub lacks crowdsecurity/non-syslog (an online install has it): the
        // stage that names a file's lines by their acquisition `type`. This is its text.
        std::fs::create_dir_all(cfg.join("parsers/s00-raw")).expect("dirs");
        std::fs::write(
            cfg.join("parsers/s00-raw/non-syslog.yaml"),
            "filter: \"evt.Line.Labels.type != 'syslog'\"\nonsuccess: next_stage\n\
             name: crowdsecurity/non-syslog\nstatics:\n  - parsed: message\n    \
             expression: evt.Line.Raw\n  - parsed: program\n    expression: evt.Line.Labels.type\n  \
             - meta: datasource_path\n    expression: evt.Line.Src\n  - meta: datasource_type\n    \
             expression: evt.Line.Module\n",
        )
        .expect("non-syslog parser");
        copy_dir(&root.join("etc/crowdsec/patterns"), &cfg.join("patterns"));
        copy_dir(
            &root.join("usr/share/crowdsec/data"),
            &self.dir.path().join("data"),
        );
    }

    /// Installs the scenario file at `path` (Floodgate's opt-in scenario, say).
    pub fn add_scenario(&self, path: &Path) {
        let to = self
            .dir
            .path()
            .join("cfg/scenarios")
            .join(path.file_name().unwrap());
        std::fs::copy(path, to).expect("install a scenario");
    }

    /// Replays the nginx access log at `log` through the enabled parsers and scenarios
    /// (`crowdsec -dsn file://… -type nginx`, the agent only, reporting to this LAPI); the
    /// alerts, as (scenario, source address), sorted. Alerts from earlier replays are deleted.
    pub fn replay(&self, log: &Path) -> Vec<(String, String)> {
        self.cscli(&["alerts", "delete", "--all"]);
        let out = Command::new(binary("crowdsec"))
            .arg("-c")
            .arg(self.config())
            .arg("-dsn")
            .arg(format!("file://{}", log.display()))
            .args(["-type", "nginx", "-no-api"])
            .output()
            .expect("run the crowdsec agent");
        assert!(
            out.status.success(),
            "replay failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let listed = self.cscli(&["alerts", "list", "-o", "json"]);
        let alerts: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("alerts");
        let mut found: Vec<(String, String)> = alerts
            .as_array()
            .map(|list| {
                list.iter()
                    .map(|a| {
                        let text = |v: &serde_json::Value| v.as_str().unwrap_or("").to_owned();
                        (text(&a["scenario"]), text(&a["source"]["value"]))
                    })
                    .collect()
            })
            .unwrap_or_default();
        found.sort();
        found
    }

    /// What LAPI logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("lapi.log")).unwrap_or_default()
    }

    /// The config file.
    pub fn config(&self) -> PathBuf {
        self.dir.path().join("config.yaml")
    }
}

impl Drop for Lapi {
    fn drop(&mut self) {
        self.kill();
    }
}

/// CrowdSec's config in `dir`: everything under it but the package's hub and plugins.
pub fn write_config(dir: &Path, port: u16) {
    let root = crowdsec_dir();
    let etc = root.join("etc/crowdsec");
    let d = dir.display();
    for dir in ["data", "cfg", "cfg/notifications"] {
        std::fs::create_dir_all(format!("{d}/{dir}")).expect("dirs");
    }
    for file in ["profiles.yaml", "simulation.yaml"] {
        std::fs::copy(etc.join(file), dir.join("cfg").join(file)).expect("copy config");
    }
    std::fs::write(dir.join("cfg/acquis.yaml"), "").expect("acquis");
    let hub = root.join("usr/share/crowdsec/hub");
    let plugins = root.join("usr/lib/crowdsec/plugins");
    let config = format!(
        "common:\n  daemonize: false\n  log_media: stdout\n  log_level: info\n  working_dir: .\n\
         config_paths:\n  config_dir: {d}/cfg/\n  data_dir: {d}/data/\n  \
         simulation_path: {d}/cfg/simulation.yaml\n  hub_dir: {hub}/\n  \
         index_path: {hub}/.index.json\n  notification_dir: {d}/cfg/notifications/\n  \
         plugin_dir: {plugins}/\n\
         crowdsec_service:\n  acquisition_path: {d}/cfg/acquis.yaml\n  parser_routines: 1\n\
         cscli:\n  output: human\n  color: no\n\
         db_config:\n  log_level: info\n  type: sqlite\n  db_path: {d}/data/crowdsec.db\n  use_wal: true\n\
         api:\n  client:\n    insecure_skip_verify: false\n    \
         credentials_path: {d}/cfg/local_api_credentials.yaml\n  \
         server:\n    log_level: info\n    listen_uri: 127.0.0.1:{port}\n    \
         profiles_path: {d}/cfg/profiles.yaml\n    trusted_ips:\n      - 127.0.0.1\n\
         prometheus:\n  enabled: false\n",
        hub = hub.display(),
        plugins = plugins.display(),
    );
    std::fs::write(dir.join("config.yaml"), config).expect("config");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("dir");
    for entry in std::fs::read_dir(from).expect("readable").flatten() {
        std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
    }
}
