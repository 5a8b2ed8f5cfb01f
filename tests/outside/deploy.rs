//! What ships for deployment, as an operator uses it: the pid file a real proxy writes and
//! removes, the book's upgrade commands run as written against it, two configs on one host
//! each with a pid file of its own (a second start of one refused), the systemd unit as
//! `systemd-analyze verify` and `security` judge it, and the Kubernetes manifests as
//! Kubernetes' own schemas (PyPI `kubernetes-validate`) judge them.

use crate::common;

use common::control_api::{admin_tables, control};
use common::wait::eventually;
use common::{floodgate_bin, free_port, Proxy, Upstream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// The Kubernetes versions the manifests are validated against: the oldest release still
/// supported upstream and the newest `kubernetes-validate` 1.37.0 knows.
const KUBERNETES_VERSIONS: [&str; 2] = ["1.35.0", "1.37.0"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The pid the file at `path` names, if it is there.
fn pid_in(path: &Path) -> Option<u32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// A proxy whose `[server]` table puts the pid file and the upgrade socket in `dir`, with
/// `admin` in its `[admin]` table.
fn proxy_with_pid_file(upstream: &Upstream, dir: &Path, admin: &str) -> (Proxy, PathBuf) {
    let pid_file = dir.join("floodgate.pid");
    let server = format!(
        "grace_period = \"0s\"\npid_file = \"{}\"\nupgrade_sock = \"{}\"",
        pid_file.display(),
        dir.join("upgrade.sock").display()
    );
    let proxy = Proxy::start_with_tables(&[&upstream.addr], &server, admin, "");
    (proxy, pid_file)
}

#[test]
fn the_pid_file_names_the_running_process_and_goes_at_a_clean_exit() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let (mut proxy, pid_file) = proxy_with_pid_file(&upstream, dir.path(), "");
    assert_eq!(pid_in(&pid_file), Some(proxy.pid()));
    let mode = std::fs::metadata(&pid_file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o644);
    proxy.signal("TERM");
    assert!(proxy.wait_exit(Duration::from_secs(10)), "SIGTERM stops it");
    assert!(!pid_file.exists(), "removed at a clean exit");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "nothing left behind: {left:?}");
}

/// The upgrade's signal step, as `docs/src/operations.md` writes it, for `config`, with
/// `floodgate` the binary these tests built.
fn documented_quit_commands(config: &Path) -> Command {
    let page = std::fs::read_to_string(root().join("docs/src/operations.md")).unwrap();
    let start = page
        .find("PID_FILE=$(floodgate --config FILE --test")
        .expect("the upgrade step finds the pid file");
    let end = start + page[start..].find("```").expect("the end of the block");
    let commands =
        page[start..end].replace("--config FILE", &format!("--config {}", config.display()));
    let bin = Path::new(floodgate_bin()).parent().unwrap().to_owned();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&path)));
    let mut sh = Command::new("sh");
    sh.args(["-c", &commands]).env("PATH", path.unwrap());
    sh
}

/// A process killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_documented_upgrade_works_with_the_pid_file() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    // The memory store's bans and overrides live in the process: what the new one has of
    // them is what `admin.state_file` holds when it starts (operations.md says so, issue 82).
    let admin_dir = tempfile::tempdir().unwrap();
    let state = format!(
        "state_file = \"{}\"\n",
        admin_dir.path().join("control").display()
    );
    let (mut old, pid_file) = proxy_with_pid_file(
        &upstream,
        dir.path(),
        &admin_tables(admin_dir.path(), &state),
    );
    let ban = serde_json::json!({"scope": "cidr", "value": "192.0.2.0/24", "ttl": "1h"});
    let (status, made) = control(&old, "POST", "/v1/bans", Some(ban));
    assert!(status == 200 || status == 201, "{status} {made}");
    let log = std::fs::File::create(dir.path().join("new.log")).unwrap();
    let new = Command::new(floodgate_bin())
        .args([
            "--config".as_ref(),
            old.config_path.as_os_str(),
            "--upgrade".as_ref(),
        ])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("the new binary starts");
    let mut new = Running(new);
    let socket = dir.path().join("upgrade.sock");
    assert!(
        eventually(Duration::from_secs(5), || socket.exists()),
        "the new process waits"
    );
    assert_eq!(
        pid_in(&pid_file),
        Some(old.pid()),
        "still the old one's until the hand-over"
    );

    let quit = documented_quit_commands(&old.config_path).status().unwrap();
    assert!(quit.success());
    let new_pid = new.0.id();
    assert!(
        eventually(Duration::from_secs(10), || pid_in(&pid_file)
            == Some(new_pid)),
        "the new process names itself once the listeners are its own:\n{}",
        std::fs::read_to_string(dir.path().join("new.log")).unwrap_or_default()
    );
    assert_eq!(old.get("/", &[]).status(), 200, "served meanwhile");
    assert!(
        old.wait_exit(Duration::from_secs(20)),
        "the old process drains and exits"
    );
    assert_eq!(
        pid_in(&pid_file),
        Some(new_pid),
        "the old one left the new one's file"
    );
    assert_eq!(
        old.get("/", &[]).status(),
        200,
        "the new process serves the same port"
    );
    let (_, bans) = control(&old, "GET", "/v1/bans", None);
    assert!(
        bans.to_string().contains("192.0.2.0/24"),
        "kept in the state file: {bans}"
    );

    let term = Command::new("kill")
        .args(["-TERM", &new_pid.to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    assert!(eventually(Duration::from_secs(10), || matches!(
        new.0.try_wait(),
        Ok(Some(_))
    )));
    assert!(
        !pid_file.exists(),
        "the new process removed its pid file at exit"
    );
}

/// Runs `bash -c` with `scripts/deps.sh` sourced, from the repository's root.
fn with_deps(script: &str) -> Output {
    let out = Command::new("bash")
        .current_dir(root())
        .args(["-c", &format!(". scripts/deps.sh && {script}")])
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The shipped unit with `ExecStart`'s binary replaced by the one these tests built (verify
/// checks that the binary is there and executable).
fn unit_here(dir: &Path) -> PathBuf {
    let unit = std::fs::read_to_string(root().join("deploy/systemd/floodgate.service")).unwrap();
    assert!(unit
        .contains("ExecStart=/usr/local/bin/floodgate --config /etc/floodgate/floodgate.toml\n"));
    let path = dir.join("floodgate.service");
    std::fs::write(
        &path,
        unit.replace("/usr/local/bin/floodgate", floodgate_bin()),
    )
    .unwrap();
    path
}

#[test]
fn systemd_analyze_verifies_the_unit_and_the_book_reports_its_exposure() {
    with_deps("need_systemd_analyze");
    let dir = tempfile::tempdir().unwrap();
    let unit = unit_here(dir.path());
    let verify = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&unit)
        .output()
        .unwrap();
    // verify exits 0 on an unknown key or a bad value too: it must have nothing to say.
    let said = [verify.stdout, verify.stderr].concat();
    assert!(
        verify.status.success() && said.is_empty(),
        "{}",
        String::from_utf8_lossy(&said)
    );

    let security = Command::new("systemd-analyze")
        .args(["security", "--offline=true", "--no-pager"])
        .arg(&unit)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&security.stdout);
    let score = report
        .split("Overall exposure level for floodgate.service: ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no overall exposure level in:\n{report}"));
    let book = std::fs::read_to_string(root().join("docs/src/deploy.md")).unwrap();
    let reported = format!("exposure level of **{score}**");
    assert!(
        book.contains(&reported),
        "docs/src/deploy.md should report `{reported}`"
    );
}

/// `text` with the directories the unit or the pod provides (`moves`, each ending in `/`)
/// moved into `dir`, so `--test` can
/// check everything else as it would be read there.
fn config_here(text: &str, dir: &Path, moves: &[(&str, &str)]) -> PathBuf {
    let mut text = text.to_owned();
    for (from, to) in moves {
        let to = dir.join(to.trim_end_matches('/'));
        std::fs::create_dir_all(&to).unwrap();
        // Quoted, and in order: a path moved into `dir` is not moved again by a later
        // pair, unless that pair moves `/tmp/` (where `dir` is): give it first.
        text = text.replace(&format!("\"{from}"), &format!("\"{}/", to.display()));
    }
    let path = dir.join("floodgate.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn floodgate_test(config: &Path) {
    let out = Command::new(floodgate_bin())
        .arg("--config")
        .arg(config)
        .arg("--test")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_units_config_passes_floodgate_test() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("deploy/systemd/floodgate.toml")).unwrap();
    floodgate_test(&config_here(
        &text,
        dir.path(),
        &[("/run/floodgate/", "run/")],
    ));
    // As shipped, outside the unit: /run/floodgate is made by systemd as the unit starts.
    assert!(!Path::new("/run/floodgate").exists(), "a unit runs here");
    let shipped = root().join("deploy/systemd/floodgate.toml");
    let out = Command::new(floodgate_bin())
        .arg("--config")
        .arg(&shipped)
        .arg("--test")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("does not exist now") && stderr.contains("RuntimeDirectory="),
        "{stderr}"
    );
}

/// A config of its own in `dir` named `name`, in front of `upstream`, that leaves
/// `server.pid_file` and `server.upgrade_sock` out; its admin port.
fn config_without_pid_file(dir: &Path, name: &str, upstream: &Upstream) -> (PathBuf, u16) {
    let (port, admin) = (free_port(), free_port());
    let path = dir.join(name);
    let text = format!(
        "[server]\nlisten = \"127.0.0.1:{port}\"\ngrace_period = \"0s\"\n\n\
         [admin]\nlisten = \"127.0.0.1:{admin}\"\n\n[upstream]\nbackends = [\"{}\"]\n",
        upstream.addr
    );
    std::fs::write(&path, text).unwrap();
    (path, admin)
}

/// The line of `floodgate --config config --test` that starts with `what`, without it.
fn tested(config: &Path, what: &str) -> PathBuf {
    let out = Command::new(floodgate_bin())
        .arg("--config")
        .arg(config)
        .arg("--test")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().find_map(|l| l.strip_prefix(what));
    PathBuf::from(
        line.unwrap_or_else(|| panic!("no `{what}` in:\n{stdout}"))
            .trim(),
    )
}

/// Starts floodgate on `config`, its log in `log`; running once its admin port answers.
fn start(config: &Path, admin: u16, log: &Path) -> Running {
    let child = Command::new(floodgate_bin())
        .arg("--config")
        .arg(config)
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    let healthz = format!("http://127.0.0.1:{admin}/healthz");
    let up = || reqwest::blocking::get(&healthz).is_ok_and(|r| r.status() == 200);
    assert!(
        eventually(Duration::from_secs(30), up),
        "{}",
        std::fs::read_to_string(log).unwrap_or_default()
    );
    Running(child)
}

#[test]
fn two_configs_on_one_host_keep_their_own_pid_files_and_a_second_start_of_one_is_refused() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let (one, one_admin) = config_without_pid_file(dir.path(), "one.toml", &upstream);
    let (two, two_admin) = config_without_pid_file(dir.path(), "two.toml", &upstream);
    let (one_pid_file, two_pid_file) = (tested(&one, "pid file"), tested(&two, "pid file"));
    assert_ne!(one_pid_file, two_pid_file);
    assert_ne!(
        tested(&one, "upgrade socket"),
        tested(&two, "upgrade socket")
    );

    let mut first = start(&one, one_admin, &dir.path().join("one.log"));
    let second = start(&two, two_admin, &dir.path().join("two.log"));
    assert!(eventually(Duration::from_secs(5), || pid_in(&one_pid_file)
        == Some(first.0.id())));
    assert!(eventually(Duration::from_secs(5), || pid_in(&two_pid_file)
        == Some(second.0.id())));

    // The same config started again finds its pid file naming the running process.
    let again = Command::new(floodgate_bin())
        .arg("--config")
        .arg(&one)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(!again.status.success(), "{said}");
    let named = format!("names process {}, which is running", first.0.id());
    assert!(said.contains(&named), "{said}");

    // The book's signal step for one config stops that instance, never the other.
    let quit = documented_quit_commands(&one).status().unwrap();
    assert!(quit.success());
    assert!(eventually(Duration::from_secs(20), || matches!(
        first.0.try_wait(),
        Ok(Some(_))
    )));
    assert!(!one_pid_file.exists(), "removed at its exit");
    let healthz = format!("http://127.0.0.1:{two_admin}/healthz");
    assert_eq!(reqwest::blocking::get(&healthz).unwrap().status(), 200);
    assert_eq!(pid_in(&two_pid_file), Some(second.0.id()));
}

/// Every manifest under `deploy/kubernetes`.
fn manifests() -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![root().join("deploy/kubernetes")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

#[test]
fn kubernetes_validate_accepts_every_manifest() {
    let out = with_deps("need_kubernetes_validate && echo \"$KUBERNETES_VALIDATE\"");
    let tool = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let manifests = manifests();
    assert!(manifests.len() >= 5, "{manifests:?}");
    for version in KUBERNETES_VERSIONS {
        let out = Command::new(&tool)
            .args(["--strict", "--kubernetes-version", version])
            .args(&manifests)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "Kubernetes {version}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn every_configmaps_config_passes_floodgate_test() {
    let configs: Vec<_> = manifests()
        .into_iter()
        .map(|path| std::fs::read_to_string(path).unwrap())
        .filter_map(|text| Some(text.split_once("floodgate.toml: |\n")?.1.to_owned()))
        .collect();
    assert_eq!(configs.len(), 2, "the gateway's and the sidecar's");
    for body in configs {
        let text: String = body
            .lines()
            .map(|l| format!("{}\n", l.strip_prefix("    ").unwrap_or(l)))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let moves = [("/tmp/", "tmp/"), ("/etc/floodgate/tokens/", "tokens/")];
        let config = config_here(&text, dir.path(), &moves);
        let token = "prometheus:a-token-of-sixteen-or-more\n";
        std::fs::write(dir.path().join("tokens/tokens"), token).unwrap();
        floodgate_test(&config);
    }
}
