//! Real nginx (`auth_request`) and real Caddy (`forward_auth`) in front of a backend, asking a
//! Floodgate decision endpoint; each on a free loopback port, its files in a temporary
//! directory, stopped when dropped. The configs are the ones docs/src/check.md shows.

use super::free_port;
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A front proxy this test started.
pub struct Front {
    child: Child,
    dir: tempfile::TempDir,
    pub port: u16,
}

impl Front {
    /// nginx on a free port, proxying to `backend` after asking `check` (host:port).
    pub fn nginx(backend: &str, check: &str) -> Self {
        Self::nginx_with(
            include_str!("../../docs/src/check/nginx.conf"),
            backend,
            check,
        )
    }

    /// nginx running the server block `server` (with LISTEN, BACKEND and FLOODGATE to fill in).
    pub fn nginx_with(server: &str, backend: &str, check: &str) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let root = dir.path().display().to_string();
        let conf = server
            .replace("LISTEN", &format!("127.0.0.1:{port}"))
            .replace("BACKEND", backend)
            .replace("FLOODGATE", check);
        let text = format!(
            "worker_processes 1;\npid {root}/nginx.pid;\nerror_log {root}/error.log;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {root}/body;\n  proxy_temp_path {root}/proxy;\n\
             fastcgi_temp_path {root}/fastcgi;\n  uwsgi_temp_path {root}/uwsgi;\n  scgi_temp_path {root}/scgi;\n\
             {conf}\n}}\n"
        );
        let path = dir.path().join("nginx.conf");
        std::fs::write(&path, text).expect("nginx config");
        let child = Command::new("nginx")
            .arg("-p")
            .arg(dir.path())
            .arg("-c")
            .arg(&path)
            .args(["-g", "daemon off;"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn nginx (scripts/test installs it)");
        Self::ready(child, dir, port)
    }

    /// Caddy on a free port, proxying to `backend` after asking `check` (host:port).
    pub fn caddy(backend: &str, check: &str) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let site = include_str!("../../docs/src/check/Caddyfile")
            .replace("LISTEN", &format!("127.0.0.1:{port}"))
            .replace("BACKEND", backend)
            .replace("FLOODGATE", check);
        let text = format!("{{\n  admin off\n  auto_https off\n}}\n{site}");
        let path = dir.path().join("Caddyfile");
        std::fs::write(&path, text).expect("Caddyfile");
        let child = Command::new("caddy")
            .args(["run", "--adapter", "caddyfile", "--config"])
            .arg(&path)
            .env("HOME", dir.path())
            .env("XDG_DATA_HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn caddy (scripts/test installs it)");
        Self::ready(child, dir, port)
    }

    fn ready(child: Child, dir: tempfile::TempDir, port: u16) -> Self {
        let mut front = Self { child, dir, port };
        let deadline = Instant::now() + Duration::from_secs(15);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = front.child.try_wait() {
                panic!("the front proxy exited ({status}): {}", front.log());
            }
            assert!(Instant::now() < deadline, "the front proxy did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        front
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// What it logged (nginx's error log).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default()
    }
}

impl Drop for Front {
    /// SIGTERM first: nginx's master then stops its workers (SIGKILL would orphan them).
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
