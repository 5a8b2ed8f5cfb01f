//! The image under test and containers run from it with real podman: the image is built once
//! per test binary by `scripts/image` (from the debug binary `cargo test` built), and each
//! container is removed when its handle drops.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The tag the tests build, apart from the `localhost/floodgate:dev` a developer builds.
pub const IMAGE: &str = "localhost/floodgate:test";

/// The address of the host's loopback seen from a container on `slirp4netns` with
/// `allow_host_loopback`, given to the container as `host.docker.internal`.
pub const HOST_LOOPBACK: &str = "10.0.2.2";

/// `podman` with the runtime and cgroup manager that work on these machines.
pub fn podman() -> Command {
    let mut command = Command::new("podman");
    command.args(["--runtime", "runc", "--cgroup-manager=cgroupfs"]);
    command
}

/// Runs `command`, returning its output; panics with its stderr if it could not start.
pub fn run(command: &mut Command) -> Output {
    command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e} (scripts/test installs podman)"))
}

/// Builds the image once for this test binary (`scripts/image --binary <debug floodgate>`).
pub fn image() -> &'static str {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let root = env!("CARGO_MANIFEST_DIR");
        let output = run(Command::new(Path::new(root).join("scripts/image")).args([
            "--binary",
            env!("CARGO_BIN_EXE_floodgate"),
            "--tag",
            IMAGE,
        ]));
        if output.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&output.stderr).into_owned())
        }
    });
    if let Err(log) = built {
        panic!("scripts/image failed:\n{log}");
    }
    IMAGE
}

/// A container started detached, removed (`podman rm -f`) when dropped.
pub struct Container {
    pub name: String,
}

impl Container {
    /// `podman run -d` of the image with the ulimits these machines need, its own network
    /// (slirp4netns) reaching the host's loopback as `host.docker.internal`, and `args`
    /// (options, then the image's arguments after a `--` element).
    pub fn start(args: &[&str]) -> Self {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "floodgate-test-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::SeqCst)
        );
        let image = image();
        let (options, arguments) = match args.iter().position(|a| *a == "--") {
            Some(i) => (&args[..i], &args[i + 1..]),
            None => (args, &[][..]),
        };
        let host = format!("host.docker.internal:{HOST_LOOPBACK}");
        let output = run(podman()
            .args(["run", "-d", "--name", &name])
            .args([
                "--ulimit",
                "nofile=1024:1024",
                "--ulimit",
                "nproc=1024:1024",
            ])
            .args(["--network", "slirp4netns:allow_host_loopback=true"])
            .args(["--add-host", &host])
            .args(options)
            .arg(image)
            .args(arguments));
        let container = Container { name };
        assert!(
            output.status.success(),
            "podman run failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        container
    }

    /// `podman exec` in the container, as its user.
    pub fn exec(&self, command: &[&str]) -> Output {
        run(podman().args(["exec", &self.name]).args(command))
    }

    /// `podman inspect --format FORMAT` of the container.
    pub fn inspect(&self, format: &str) -> String {
        let output = run(podman().args(["inspect", "--format", format, &self.name]));
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    /// What the process wrote so far (stdout and stderr).
    pub fn logs(&self) -> String {
        let output = run(podman().args(["logs", &self.name]));
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    }

    /// Waits until `GET url` answers 200, up to `limit`; panics with the logs if it never does.
    pub fn wait_ok(&self, url: &str, limit: Duration) {
        let client = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(2))
            .build()
            .expect("client");
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if client.get(url).send().is_ok_and(|r| r.status() == 200) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "{url} never answered 200; the container's log:\n{}",
            self.logs()
        );
    }

    /// Waits until `command` succeeds in the container, up to 60 s; panics with the logs if
    /// it never does.
    pub fn wait_exec_ok(&self, command: &[&str]) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.exec(command).status.success() {
            assert!(
                Instant::now() < deadline,
                "{command:?} never succeeded; the container's log:\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Sends `signal` to the container's process and waits for it to exit, up to `limit`;
    /// the exit code.
    pub fn stop_with(&self, signal: &str, limit: Duration) -> i32 {
        let sent = run(podman().args(["kill", "--signal", signal, &self.name]));
        assert!(sent.status.success(), "podman kill --signal {signal}");
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if self.inspect("{{.State.Status}}") == "exited" {
                return self.inspect("{{.State.ExitCode}}").parse().unwrap_or(-1);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the container did not exit within {limit:?} of SIG{signal}");
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = podman().args(["rm", "-f", "-t", "0", &self.name]).output();
    }
}
