//! Connections that tried to hold the proxy: heads trickled a byte at a time, idle
//! keep-alive connections, oversized heads, and more connections than the caps allow (set, or
//! lowered by a small open-file limit).

use crate::common::{self, raw, Proxy, Upstream};
use std::process::Command;

/// Reads from `stream` until the proxy closes it (or 10 s pass): what it sent, and when.
pub(crate) fn until_closed(stream: &mut std::net::TcpStream) -> (String, std::time::Duration) {
    use std::io::Read;
    let started = std::time::Instant::now();
    let mut out = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&chunk[..n]),
        }
    }
    (
        String::from_utf8_lossy(&out).into_owned(),
        started.elapsed(),
    )
}

#[test]
fn slowloris_heads_are_closed_after_header_timeout() {
    use std::io::Write;
    use std::time::Duration;
    let upstream = Upstream::start();
    let proxy = Proxy::start_with_server(&[&upstream.addr], "header_timeout = \"1s\"", "");
    // A head sent a byte every 100 ms never completes in time.
    trickle_until_closed(raw::connect(proxy.port));
    // So does the next head on a connection that was served: its clock starts at its first
    // byte.
    let mut reused = raw::connect(proxy.port);
    reused
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    assert_eq!(raw::status(&raw::read_response(&mut reused)), 200);
    trickle_until_closed(reused);
    // A connection that says nothing is closed too.
    let (_, after) = until_closed(&mut raw::connect(proxy.port));
    assert!(after < Duration::from_secs(3), "{after:?}");
    // A whole head in time is served.
    assert_eq!(raw::get(proxy.port, "/", ""), 200);
    assert_eq!(upstream.served(), 2);
}

/// Writes a request head to `conn` a byte every 100 ms and checks that the proxy closes the
/// connection, unanswered, after the 1 s header_timeout (within generous bounds).
pub(crate) fn trickle_until_closed(mut conn: std::net::TcpStream) {
    use std::time::Duration;
    let writer = trickle(conn.try_clone().unwrap());
    let (answer, after) = until_closed(&mut conn);
    assert!(answer.is_empty(), "{answer}");
    assert!(
        after >= Duration::from_millis(900) && after < Duration::from_secs(3),
        "{after:?}"
    );
    writer.join().unwrap();
}

/// Writes a request head to `conn` a byte every 100 ms, until it is closed.
fn trickle(mut conn: std::net::TcpStream) -> std::thread::JoinHandle<()> {
    use std::io::Write;
    std::thread::spawn(move || {
        let head = b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
        for byte in head {
            if conn.write_all(&[*byte]).is_err() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    })
}

#[test]
fn idle_keepalive_connections_are_closed_after_keepalive_timeout() {
    use std::io::Write;
    use std::time::Duration;
    let upstream = Upstream::start();
    let server = "header_timeout = \"1s\"\nkeepalive_timeout = \"2s\"";
    let proxy = Proxy::start_with_server(&[&upstream.addr], server, "");
    let mut conn = raw::connect(proxy.port);
    let request = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    for _ in 0..2 {
        conn.write_all(request).unwrap();
        assert_eq!(raw::status(&raw::read_response(&mut conn)), 200);
        // Idling past header_timeout between requests is fine: the next head's clock starts
        // at its first byte.
        std::thread::sleep(Duration::from_millis(1500));
    }
    conn.write_all(request).unwrap();
    assert_eq!(raw::status(&raw::read_response(&mut conn)), 200);
    let (rest, after) = until_closed(&mut conn);
    assert!(rest.is_empty(), "{rest}");
    assert!(
        after >= Duration::from_millis(1500) && after < Duration::from_secs(4),
        "{after:?}"
    );
    assert_eq!(upstream.served(), 3);
}

#[test]
fn a_100_kb_header_gets_431() {
    let upstream = Upstream::start();
    let proxy = Proxy::start(&[&upstream.addr], "");
    let big = "a".repeat(100 * 1024);
    let head = format!("GET / HTTP/1.1\r\nHost: x\r\nX-Big: {big}\r\n\r\n");
    let response = raw::exchange(proxy.port, &head);
    assert_eq!(
        raw::status(&response),
        431,
        "{}",
        &response[..response.len().min(300)]
    );
    assert!(response.contains("application/problem+json"));
    // Just under the limit is served.
    let fits = "a".repeat(60 * 1024);
    assert_eq!(
        raw::get(proxy.port, "/", &format!("X-Big: {fits}\r\n")),
        200
    );
    assert_eq!(upstream.served(), 1);
}

#[test]
fn past_max_connections_new_connections_are_refused_while_existing_ones_work() {
    use std::io::Write;
    let upstream = Upstream::start();
    let proxy = Proxy::start_with_server(&[&upstream.addr], "max_connections = 3", "");
    open_connections_reach(&proxy, 0.0); // the harness's readiness probe closes
    let request = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    let mut open: Vec<std::net::TcpStream> = (0..3).map(|_| raw::connect(proxy.port)).collect();
    for conn in &mut open {
        conn.write_all(request).unwrap();
        assert_eq!(raw::status(&raw::read_response(conn)), 200);
    }
    let mut refused = raw::connect(proxy.port);
    let _ = refused.write_all(request);
    let (answer, _) = until_closed(&mut refused);
    assert!(answer.is_empty(), "refused without an answer: {answer}");
    for conn in &mut open {
        conn.write_all(request).unwrap();
        assert_eq!(raw::status(&raw::read_response(conn)), 200, "still served");
    }
    assert_eq!(
        proxy.metric("floodgate_connections_refused_total{reason=\"total\"}"),
        1.0
    );
    assert_eq!(proxy.metric("floodgate_connections_open"), 3.0);
    drop(open.pop());
    open_connections_reach(&proxy, 2.0);
    assert_eq!(raw::get(proxy.port, "/", ""), 200, "a slot came free");

    // Per client address.
    let proxy = Proxy::start_with_server(
        &[&upstream.addr],
        "max_connections = 100\nmax_connections_per_ip = 2",
        "",
    );
    open_connections_reach(&proxy, 0.0);
    let mut mine: Vec<std::net::TcpStream> = (0..2).map(|_| raw::connect(proxy.port)).collect();
    for conn in &mut mine {
        conn.write_all(request).unwrap();
        assert_eq!(raw::status(&raw::read_response(conn)), 200);
    }
    let mut third = raw::connect(proxy.port);
    let _ = third.write_all(request);
    assert!(until_closed(&mut third).0.is_empty());
    assert_eq!(
        proxy.metric("floodgate_connections_refused_total{reason=\"per_ip\"}"),
        1.0
    );
}

/// Waits until the proxy's listener holds `count` open connections (its gauge says so).
fn open_connections_reach(proxy: &Proxy, count: f64) {
    let reached = common::wait::eventually(std::time::Duration::from_secs(10), || {
        proxy.metric("floodgate_connections_open") == count
    });
    assert!(reached, "{count} connections open:\n{}", proxy.log());
}

/// A proxy run by hand under `prlimit --nofile=<nofile>` (util-linux) in front of `backend`,
/// default caps; killed when dropped.
struct Limited {
    child: std::process::Child,
    dir: tempfile::TempDir,
    port: u16,
    admin: u16,
}

impl Limited {
    fn start(nofile: &str, backend: &str) -> Self {
        let (port, admin) = (common::free_port(), common::free_port());
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("floodgate.toml");
        let text = format!(
            "[server]\nlisten = \"127.0.0.1:{port}\"\nthreads = 2\n\n\
             [admin]\nlisten = \"127.0.0.1:{admin}\"\n\n[upstream]\nbackends = [\"{backend}\"]\n"
        );
        std::fs::write(&config, text).unwrap();
        let log = std::fs::File::create(dir.path().join("log")).unwrap();
        let child = Command::new("prlimit")
            .arg(format!("--nofile={nofile}"))
            .arg(common::floodgate_bin())
            .arg("--config")
            .arg(&config)
            .stderr(log)
            .spawn()
            .expect("prlimit (util-linux) runs the proxy");
        let limited = Self {
            child,
            dir,
            port,
            admin,
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while limited.metrics().is_none() {
            assert!(std::time::Instant::now() < deadline, "{}", limited.log());
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        limited
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
    }

    /// The admin listener's `/metrics`, once it answers.
    fn metrics(&self) -> Option<String> {
        let url = format!("http://127.0.0.1:{}/metrics", self.admin);
        reqwest::blocking::get(url).ok()?.text().ok()
    }

    fn metric(&self, series: &str) -> f64 {
        common::series_value(&self.metrics().unwrap_or_default(), series)
    }
}

impl Drop for Limited {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_low_open_file_limit_lowers_the_connection_cap_and_new_clients_are_still_served() {
    use std::io::Read;
    let upstream = Upstream::start();
    // The soft limit is raised to the hard one at start.
    let raised = Limited::start("256:4096", &upstream.addr);
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", raised.child.id())).unwrap();
    let open_files = limits.lines().find(|l| l.starts_with("Max open files"));
    assert!(open_files.is_some_and(|l| l.contains("4096")), "{limits}");
    assert!(
        raised.log().contains("from 256 to 4096"),
        "{}",
        raised.log()
    );
    drop(raised);

    // 256 descriptors at most: 64 connections (two each after a reserve of 128).
    let proxy = Limited::start("256:256", &upstream.addr);
    assert!(
        proxy.log().contains("lowered from 10000 to 64"),
        "{}",
        proxy.log()
    );
    // In waves of 50, each answered (admitted or refused) before the next: the cap is what is
    // under test, not how many refused sockets a loaded machine accepts before it closes them.
    let refused = || proxy.metric("floodgate_connections_refused_total{reason=\"total\"}");
    let mut idle: Vec<std::net::TcpStream> = Vec::new();
    let settled = std::time::Instant::now() + std::time::Duration::from_secs(10);
    for _ in 0..6 {
        idle.extend((0..50).map(|_| raw::connect(proxy.port)));
        let answered = idle.len() as f64;
        while refused() + proxy.metric("floodgate_connections_open") < answered {
            assert!(std::time::Instant::now() < settled, "{}", proxy.log());
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
    assert!(refused() >= 236.0, "{}", proxy.log());
    assert_eq!(proxy.metric("floodgate_connections_open"), 64.0);
    // The refused ones were closed at once; free ten of the admitted ones.
    idle.retain_mut(|conn| {
        conn.set_nonblocking(true).unwrap();
        !matches!(conn.read(&mut [0u8; 1]), Ok(0))
    });
    assert_eq!(idle.len(), 64);
    idle.truncate(54);
    let freed = common::wait::eventually(std::time::Duration::from_secs(10), || {
        proxy.metric("floodgate_connections_open") == 54.0
    });
    assert!(freed, "ten connections closed: {}", proxy.log());
    for _ in 0..5 {
        assert_eq!(raw::get(proxy.port, "/", ""), 200, "a new client is served");
    }
    assert!(
        !proxy.log().contains("Too many open files"),
        "{}",
        proxy.log()
    );
}
