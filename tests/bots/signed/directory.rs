//! Key directories served over HTTPS on loopback by `directory.py`, under a test CA.

use crate::common::certs::make_certificates;
use crate::common::pytools::python;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// How one directory behaves.
pub enum Mode<'a> {
    /// Serves the JWKS in this file.
    Keys(&'a Path),
    /// Answers after 30 s.
    Slow,
    /// Answers something that is not JSON.
    Garbage,
    /// Answers 10 MB.
    Big,
}

/// The directory servers, their CA and a log of the requests they got.
pub struct Directories {
    child: Child,
    /// The test CA's certificate (PEM).
    pub ca: PathBuf,
    hits: PathBuf,
    _dir: tempfile::TempDir,
}

impl Directories {
    /// Serves one directory per `(port, mode)`.
    pub fn start(servers: &[(u16, Mode<'_>)]) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        make_certificates(dir.path());
        let hits = dir.path().join("hits");
        std::fs::write(&hits, "").expect("hits file");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bots/signed/directory.py");
        let specs = servers.iter().map(|(port, mode)| match mode {
            Mode::Keys(file) => format!("{port}=keys={}", file.display()),
            Mode::Slow => format!("{port}=slow"),
            Mode::Garbage => format!("{port}=garbage"),
            Mode::Big => format!("{port}=big"),
        });
        let mut child = Command::new(python())
            .arg(script)
            .arg(dir.path().join("server.pem"))
            .arg(dir.path().join("server.key"))
            .arg(&hits)
            .args(specs)
            .stdout(Stdio::piped())
            .spawn()
            .expect("directory.py starts");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        BufReader::new(stdout).read_line(&mut line).expect("ready");
        assert_eq!(line.trim(), "ready", "directory.py did not start");
        Self {
            child,
            ca: dir.path().join("ca.pem"),
            hits,
            _dir: dir,
        }
    }

    /// The requests served so far, one `PORT PATH` line each.
    pub fn hits(&self) -> String {
        std::fs::read_to_string(&self.hits).unwrap_or_default()
    }
}

impl Drop for Directories {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
