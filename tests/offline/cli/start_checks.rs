//! Issue #63, probes 3, 6, 8 and 10 by `--test`: a config whose start would fail (a short
//! token line, a token file that is a directory or not UTF-8, a state file in a missing
//! directory or readable by others) fails the test with the start's message; the warnings of a
//! start (an admin listener beyond loopback without a token file, a network with host bits
//! set) are given by the test too.

use super::check;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// A minimal config with `admin` lines in `[admin]` and `extra` after, written into `dir`.
fn config(dir: &Path, admin: &str, extra: &str) -> std::path::PathBuf {
    let path = dir.join("floodgate.toml");
    std::fs::write(
        &path,
        format!(
            "[server]\nlisten = \"127.0.0.1:8080\"\n\n[admin]\n{admin}\n\n\
             [upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n{extra}\n"
        ),
    )
    .unwrap();
    path
}

/// `--test` of that config: whether it passed, and what it wrote to stderr.
fn test(dir: &Path, admin: &str, extra: &str) -> (bool, String) {
    let out = check(&config(dir, admin, extra));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.success(), stderr)
}

#[test]
fn a_token_file_the_start_cannot_read_fails_the_test() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    let admin = format!("token_file = \"{}\"", tokens.display());
    std::fs::write(&tokens, "ops:short\n").unwrap();
    let (ok, stderr) = test(dir.path(), &admin, "");
    assert!(!ok, "a short token line");
    assert!(
        stderr.contains(&format!("{}:1: expected `name:token`", tokens.display())),
        "{stderr}"
    );
    std::fs::write(&tokens, b"ops:\xff\xfe0123456789abcdef\n").unwrap();
    let (ok, stderr) = test(dir.path(), &admin, "");
    assert!(
        !ok && stderr.contains("cannot read the token file"),
        "not UTF-8: {stderr}"
    );
    std::fs::remove_file(&tokens).unwrap();
    std::fs::create_dir(&tokens).unwrap();
    let (ok, stderr) = test(dir.path(), &admin, "");
    assert!(
        !ok && stderr.contains("cannot read the token file"),
        "a directory: {stderr}"
    );
    std::fs::remove_dir(&tokens).unwrap();
    std::fs::write(&tokens, "ops:0123456789abcdef\n").unwrap();
    let (ok, stderr) = test(dir.path(), &admin, "");
    assert!(ok, "a good token file: {stderr}");
}

#[test]
fn a_state_file_the_start_would_refuse_fails_the_test_naming_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nowhere/state.json");
    let (ok, stderr) = test(
        dir.path(),
        &format!("state_file = \"{}\"", missing.display()),
        "",
    );
    assert!(!ok && stderr.contains("does not exist"), "{stderr}");

    let state = dir.path().join("state.json");
    let admin = format!("state_file = \"{}\"", state.display());
    let (ok, stderr) = test(dir.path(), &admin, "");
    assert!(ok, "not there yet: the start writes it: {stderr}");
    std::fs::write(&state, r#"{"next_id":1,"bans":[],"overrides":[]}"#).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (ok, stderr) = test(dir.path(), &admin, "");
    assert!(!ok, "world-readable");
    assert!(
        stderr.contains(&format!("chmod 600 {}", state.display())),
        "{stderr}"
    );
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (ok, stderr) = test(dir.path(), &admin, "");
    assert!(ok, "{stderr}");
    std::fs::write(&state, "not json").unwrap();
    let (ok, stderr) = test(dir.path(), &admin, "");
    assert!(
        !ok && stderr.contains("cannot load the control state"),
        "{stderr}"
    );
}

#[test]
fn protect_metrics_needs_a_token_file() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, stderr) = test(dir.path(), "protect_metrics = true", "");
    assert!(
        !ok && stderr.contains("`admin.protect_metrics` needs `admin.token_file`"),
        "{stderr}"
    );
}

#[test]
fn an_admin_listener_beyond_loopback_without_tokens_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, stderr) = test(dir.path(), "listen = \"0.0.0.0:9090\"", "");
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains("WARN") && stderr.contains("admin.token_file is not set"),
        "{stderr}"
    );
    let (ok, stderr) = test(dir.path(), "", "");
    assert!(ok && !stderr.contains("WARN"), "loopback: {stderr}");
}

#[test]
fn a_network_with_host_bits_is_warned_about_naming_the_network_read() {
    let dir = tempfile::tempdir().unwrap();
    let access = "[access]\ndeny = [\"cidr:10.0.0.1/8\", \"cidr:::/0\"]\n\n[identity.ip]\ntrusted_proxies = [\"192.168.1.1/16\"]\n";
    let (ok, stderr) = test(dir.path(), "", access);
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains(
            "`access.deny`: `10.0.0.1/8` sets host bits below its prefix and is read as 10.0.0.0/8"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("is read as 192.168.0.0/16"), "{stderr}");
    assert!(
        stderr.contains("`access.deny`: `::/0` lists every address of its family"),
        "{stderr}"
    );
}

#[test]
fn tls_files_and_an_access_log_the_start_cannot_use_fail_the_test() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert, "not a certificate\n").unwrap();
    std::fs::write(&key, "not a key\n").unwrap();
    let path = config(dir.path(), "", "");
    let text = std::fs::read_to_string(&path).unwrap().replacen(
        "[admin]",
        &format!(
            "tls_listen = \"127.0.0.1:8443\"\ntls_cert_file = \"{}\"\ntls_key_file = \"{}\"\n\n[admin]",
            cert.display(),
            key.display()
        ),
        1,
    );
    std::fs::write(&path, text).unwrap();
    let out = check(&path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("no PEM certificate"),
        "{stderr}"
    );

    let log = dir.path().join("nowhere/access.log");
    let path = config(dir.path(), "", "");
    let text = std::fs::read_to_string(&path).unwrap().replacen(
        "[admin]",
        &format!("access_log_file = \"{}\"\n\n[admin]", log.display()),
        1,
    );
    std::fs::write(&path, text).unwrap();
    let out = check(&path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("does not exist"),
        "{stderr}"
    );
}

#[test]
fn a_crawl_delay_for_every_crawler_and_a_token_no_crawler_bears_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let robots = "[robots]\nsource = \"managed\"\n\
                  groups = { \"*\" = { crawl_delay = \"2s\" }, \"ai-crawlers\" = { disallow = [\"/\"] }, GPTBot = { crawl_delay = \"5s\" } }\n";
    let (ok, stderr) = test(dir.path(), "", robots);
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains("WARN")
            && stderr.contains(
                "`robots.groups.\"*\".crawl_delay`: Google ignores Crawl-delay; a verified \
                 search engine is held to it only by a group naming it"
            ),
        "{stderr}"
    );
    assert!(
        stderr.contains("`robots.groups.\"ai-crawlers\"`: no crawler of the catalogue is named"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("GPTBot"),
        "a group naming a crawler: {stderr}"
    );
}
