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
