//! The Python tools tests drive (`mmdb-writer`, `dnslib`): the venv `scripts/deps.sh`'s
//! `need_pytools` makes, made here first when a test runs without `scripts/test`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The venv's `python`, with `mmdb_writer`, `netaddr` and `dnslib` importable.
pub fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let out = Command::new("bash")
            .current_dir(root)
            .args([
                "-c",
                ". scripts/deps.sh && need_pytools && echo \"$PYTOOLS_PYTHON\"",
            ])
            .output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "need_pytools failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
    })
}
