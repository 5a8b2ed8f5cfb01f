//! The container image (Dockerfile, built by `scripts/image` from an mmdebstrap base with the
//! debug binary), run with real podman: it serves through a config mounted read-only and
//! throttles, runs as a non-root user on a read-only root filesystem, stops cleanly on
//! SIGTERM with a request in flight answered, reaches a Redis outside the container, and its
//! default config starts with the HEALTHCHECK passing (which fails where /healthz does not
//! answer). The container has its own network (slirp4netns); the host's loopback, where the
//! test's upstream and Redis listen, is `host.docker.internal` inside it, and its listeners
//! are published on the host's loopback.

use crate::common;
mod container;

use common::redis::RedisServer;
use common::{free_port, Upstream};
use container::{podman, run, Container};
use std::path::Path;
use std::time::{Duration, Instant};

/// A config for the container: listeners on every interface of its own network, the
/// backend and `extra` (store, policies) on the host.
fn write_config(dir: &Path, upstream: &Upstream, extra: &str) -> String {
    let port = upstream.addr.rsplit(':').next().expect("upstream port");
    let text = format!(
        "[server]\nlisten = \"0.0.0.0:8080\"\nthreads = 2\ngrace_period = \"3s\"\nshutdown_timeout = \"1s\"\n\n\
         [admin]\nlisten = \"0.0.0.0:9090\"\n\n\
         [upstream]\nbackends = [\"host.docker.internal:{port}\"]\n\n\
         [identity]\nsources = [\"header:x-api-key\"]\n\n{extra}"
    );
    let path = dir.join("floodgate.toml");
    std::fs::write(&path, text).expect("write config");
    path.to_string_lossy().into_owned()
}

/// A proxy in a container on `config` (mounted read-only), the root filesystem read-only;
/// its listeners published on the host's loopback. The container and (proxy, admin) ports.
fn start_proxy(config: &str) -> (Container, u16, u16) {
    let (port, admin) = (free_port(), free_port());
    let mount = format!("{config}:/etc/floodgate/floodgate.toml:ro");
    let (publish, publish_admin) = (
        format!("127.0.0.1:{port}:8080"),
        format!("127.0.0.1:{admin}:9090"),
    );
    let container = Container::start(&[
        "--read-only",
        "-v",
        &mount,
        "-p",
        &publish,
        "-p",
        &publish_admin,
        "--",
        "--config",
        "/etc/floodgate/floodgate.toml",
    ]);
    container.wait_ok(
        &format!("http://127.0.0.1:{admin}/healthz"),
        Duration::from_secs(60),
    );
    (container, port, admin)
}

/// The statuses of `n` requests with one API key.
fn statuses(port: u16, key: &str, n: usize) -> Vec<u16> {
    let client = reqwest::blocking::Client::new();
    (0..n)
        .map(|_| {
            client
                .get(format!("http://127.0.0.1:{port}/"))
                .header("x-api-key", key)
                .send()
                .map_or(0, |r| r.status().as_u16())
        })
        .collect()
}

const POLICY: &str = "[[policy]]\nname = \"p\"\ncapacity = 3\nrate = \"1/h\"\n";

#[test]
fn serves_through_a_read_only_config_and_throttles() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let config = write_config(dir.path(), &upstream, POLICY);
    let (_container, port, _) = start_proxy(&config);
    assert_eq!(statuses(port, "a", 5), [200, 200, 200, 429, 429]);
    assert_eq!(
        statuses(port, "b", 1),
        [200],
        "another caller has its own bucket"
    );
    assert_eq!(
        upstream.served(),
        4,
        "the throttled requests never reached it"
    );
}

#[test]
fn runs_as_a_non_root_user_on_a_read_only_root() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let config = write_config(dir.path(), &upstream, POLICY);
    let (container, _, _) = start_proxy(&config);
    let status = container.exec(&["cat", "/proc/1/status"]);
    let status = String::from_utf8_lossy(&status.stdout);
    let uid = status.lines().find(|l| l.starts_with("Uid:")).unwrap_or("");
    assert_eq!(
        uid.split_whitespace().collect::<Vec<_>>(),
        ["Uid:", "10001", "10001", "10001", "10001"],
        "the proxy runs as the image's user"
    );
    let user = container.exec(&["id", "-un"]);
    assert_eq!(String::from_utf8_lossy(&user.stdout).trim(), "floodgate");
    assert_eq!(container.inspect("{{.HostConfig.ReadonlyRootfs}}"), "true");
    assert_eq!(
        container.inspect("{{range .Mounts}}{{.Destination}} rw={{.RW}}{{end}}"),
        "/etc/floodgate/floodgate.toml rw=false"
    );
    for path in [
        "/usr/local/bin/floodgate",
        "/etc/floodgate/floodgate.toml",
        "/x",
    ] {
        let touched = container.exec(&["touch", path]);
        assert!(!touched.status.success(), "{path} is not writable");
    }
}

#[test]
fn stops_cleanly_on_sigterm_answering_the_request_in_flight() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let config = write_config(dir.path(), &upstream, POLICY);
    let (container, port, _) = start_proxy(&config);
    let started = Instant::now();
    let (status, code) = std::thread::scope(|scope| {
        let in_flight = scope.spawn(|| {
            reqwest::blocking::Client::new()
                .get(format!("http://127.0.0.1:{port}/slow?ms=1500"))
                .header("x-api-key", "slow")
                .send()
                .map(|r| r.status().as_u16())
        });
        while upstream.served() == 0 && started.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let code = container.stop_with("TERM", Duration::from_secs(20));
        (in_flight.join().expect("client thread"), code)
    });
    assert_eq!(status.expect("answered despite the shutdown"), 200);
    assert_eq!(code, 0, "exit code; the log:\n{}", container.logs());
    assert!(
        !container.logs().contains("panicked"),
        "{}",
        container.logs()
    );
}

#[test]
fn reaches_a_redis_outside_the_container() {
    let upstream = Upstream::start();
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let store = format!(
        "[store]\nkind = \"redis\"\nurl = \"redis://host.docker.internal:{}\"\n\n{POLICY}",
        redis.port
    );
    let config = write_config(dir.path(), &upstream, &store);
    let (_container, port, admin) = start_proxy(&config);
    assert_eq!(statuses(port, "a", 4), [200, 200, 200, 429]);
    assert!(redis.script_calls() >= 4, "each decision ran in Redis");
    let ready = reqwest::blocking::get(format!("http://127.0.0.1:{admin}/readyz"))
        .and_then(|r| r.text())
        .expect("readyz");
    assert_eq!(ready.trim(), "ready");
}

/// `podman healthcheck run`: true when the image's HEALTHCHECK passed.
fn healthy(container: &Container) -> bool {
    let check = run(podman().args(["healthcheck", "run", &container.name]));
    check.status.success()
}

#[test]
fn the_default_config_starts_and_the_healthcheck_passes() {
    let container = Container::start(&["--read-only"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !healthy(&container) {
        assert!(
            Instant::now() < deadline,
            "the HEALTHCHECK never passed; the log:\n{}",
            container.logs()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(container
        .inspect("{{.Config.Healthcheck.Test}}")
        .contains("curl -fsS --max-time 2 -o /dev/null \"$FLOODGATE_HEALTHZ\""));
    assert!(container
        .inspect("{{.Config.Env}}")
        .contains("FLOODGATE_HEALTHZ=http://127.0.0.1:9090/healthz"));
    assert_eq!(
        container.inspect("{{.Config.User}}"),
        "floodgate",
        "the image's user"
    );
}

#[test]
fn the_healthcheck_fails_where_no_healthz_answers() {
    let container = Container::start(&[
        "--read-only",
        "-e",
        "FLOODGATE_HEALTHZ=http://127.0.0.1:9/healthz",
    ]);
    container.wait_exec_ok(&["curl", "-fsS", "http://127.0.0.1:9090/healthz"]);
    assert!(!healthy(&container), "nothing listens on port 9");
}
