//! `server.pid_file` and `server.upgrade_sock` when the config leaves them out: a pair of its
//! own for each config file, so two instances on one host (two config files) never share a pid
//! file or an upgrade socket, and the same config started again (or upgraded with `--upgrade`)
//! finds the same pair. They are named after the first 16 hex digits of the BLAKE3 hash of
//! the config file's canonical path (symbolic links resolved):
//! `/tmp/floodgate-<hash>.pid` and `/tmp/floodgate-<hash>.sock`. `--test` prints both.

use std::path::{Path, PathBuf};

/// Where the defaults live: `/tmp`, the same for every user and service manager, so a new
/// process started from another shell finds the old one's socket.
const DIR: &str = "/tmp";

/// The default file with `extension` (`pid`, `sock`) of the config file at `config`.
pub(super) fn default_for(config: &Path, extension: &str) -> PathBuf {
    let canonical = std::fs::canonicalize(config)
        .or_else(|_| std::path::absolute(config))
        .unwrap_or_else(|_| config.to_owned());
    let hash = blake3::hash(canonical.as_os_str().as_encoded_bytes());
    let hex = hash.to_hex();
    Path::new(DIR).join(format!("floodgate-{}.{extension}", &hex[..16]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_config_file_has_its_own_pair_and_a_path_spelled_otherwise_is_the_same_file() {
        let dir = tempfile::tempdir().unwrap();
        let (one, two) = (dir.path().join("one.toml"), dir.path().join("two.toml"));
        for file in [&one, &two] {
            std::fs::write(file, "").unwrap();
        }
        let pid = default_for(&one, "pid");
        assert_ne!(pid, default_for(&two, "pid"));
        assert_eq!(pid, default_for(&dir.path().join("./one.toml"), "pid"));
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink(&one, &link).unwrap();
        assert_eq!(pid, default_for(&link, "pid"));
        let name = pid.file_name().unwrap().to_str().unwrap();
        assert!(
            pid.starts_with("/tmp") && name.starts_with("floodgate-"),
            "{name}"
        );
        assert!(name.ends_with(".pid") && name.len() == "floodgate-.pid".len() + 16);
        let sock = default_for(&one, "sock");
        assert_eq!(sock.with_extension("pid"), pid);
    }
}
