//! The probes that held the decision endpoint, the admin listener and the rls listener,
//! re-run: slowloris heads, 1 MB heads, idle connections past the caps, a 60 KB target echoed
//! in a 400, 50,000 streams on one HTTP/2 connection, a half-sent preface, a stream whose
//! message never comes; and a head the proxy's parser refuses, which the access log now shows.

use super::connections::{trickle_until_closed, until_closed};
use super::frames::{self, call_headers, handshake, read_frame, GOAWAY, REFUSED_STREAM};
use crate::common::wait::eventually;
use crate::common::{free_port, raw, Proxy, Upstream};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A Floodgate with `[check]` on a free port (`server`, `admin`: more `[server]` and
/// `[admin]` keys): it and that port, accepting.
fn with_check(upstream: &Upstream, server: &str, admin: &str) -> (Proxy, u16) {
    let port = free_port();
    let check = format!("[check]\nlisten = \"127.0.0.1:{port}\"\n");
    let proxy = Proxy::start_with_tables(&[&upstream.addr], server, admin, &check);
    wait_accepting(port);
    (proxy, port)
}

/// A Floodgate with `[rls]` on a free port (`server`: more `[server]` keys).
fn with_rls(upstream: &Upstream, server: &str) -> (Proxy, u16, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let rules = "domain: edge\ndescriptors:\n  - key: k\n    rate_limit: { unit: second, requests_per_unit: 5 }\n";
    std::fs::write(dir.path().join("edge.yaml"), rules).unwrap();
    let port = free_port();
    let rls = format!(
        "[rls]\nlisten = \"127.0.0.1:{port}\"\nconfig_dir = \"{}\"\n",
        dir.path().display()
    );
    let proxy = Proxy::start_with_server(&[&upstream.addr], server, &rls);
    wait_accepting(port);
    (proxy, port, dir)
}

fn wait_accepting(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The probes' connections close.
    std::thread::sleep(Duration::from_millis(300));
}

/// Whether `conn` is still open after 300 ms: no end of stream read meanwhile.
fn still_open(conn: &mut TcpStream) -> bool {
    conn.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut buf = [0u8; 256];
    loop {
        match conn.read(&mut buf) {
            Ok(0) => return false,
            Ok(_) => continue,
            Err(e) => {
                return matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                )
            }
        }
    }
}

#[test]
fn slowloris_heads_on_check_and_admin_are_closed_after_header_timeout() {
    let upstream = Upstream::start();
    let (proxy, check) = with_check(&upstream, "header_timeout = \"1s\"", "");
    for port in [check, proxy.admin_port] {
        trickle_until_closed(raw::connect(port));
        let (_, after) = until_closed(&mut raw::connect(port));
        assert!(
            after < Duration::from_secs(3),
            "a silent connection: {after:?}"
        );
    }
    assert_eq!(raw::get(proxy.admin_port, "/healthz", ""), 200);
}

/// Sends a head with a 1 MB header on a new connection to `port` (from another thread, which
/// may find the connection closed) and reads the answer.
fn one_mb_head(port: u16) -> String {
    let mut conn = raw::connect(port);
    let mut writer = conn.try_clone().unwrap();
    let sent = std::thread::spawn(move || {
        let big = "a".repeat(1024 * 1024);
        let head = format!("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: {big}\r\n\r\n");
        let _ = writer.write_all(head.as_bytes());
    });
    let (answer, _) = until_closed(&mut conn);
    sent.join().unwrap();
    answer
}

#[test]
fn a_1_mb_head_on_check_and_admin_gets_431() {
    let upstream = Upstream::start();
    let (proxy, check) = with_check(&upstream, "", "");
    for port in [check, proxy.admin_port] {
        let answer = one_mb_head(port);
        assert_eq!(
            raw::status(&answer),
            431,
            "{}",
            &answer[..answer.len().min(300)]
        );
    }
    // A head parsing refuses gets 400, and the connection closes.
    let bad = raw::exchange(
        proxy.admin_port,
        "GET /healthz HTTP/1.1\r\nBad Header\r\n\r\n",
    );
    assert_eq!(raw::status(&bad), 400, "{bad}");
}

#[test]
fn past_max_connections_check_and_admin_close_new_connections() {
    let upstream = Upstream::start();
    // Responses close their connections, so the harness's client holds none.
    let server = "max_connections = 3\nkeepalive_timeout = \"0s\"";
    // `[check]` is capped by `server.max_connections`, the admin listener by its own.
    let (proxy, check) = with_check(&upstream, server, "max_connections = 3");
    for port in [check, proxy.admin_port] {
        let mut held: Vec<TcpStream> = (0..3).map(|_| raw::connect(port)).collect();
        std::thread::sleep(Duration::from_millis(100));
        let (answer, after) = until_closed(&mut raw::connect(port));
        assert!(
            answer.is_empty() && after < Duration::from_secs(1),
            "{answer} {after:?}"
        );
        assert!(held.iter_mut().all(still_open));
        drop(held.pop());
        let freed = eventually(Duration::from_secs(10), || {
            raw::get(port, "/healthz", "") != 0
        });
        assert!(freed, "a slot came free");
    }
}

#[test]
fn a_400_from_check_echoes_at_most_256_bytes() {
    let upstream = Upstream::start();
    let (_proxy, check) = with_check(&upstream, "", "");
    let long = "x".repeat(60 * 1024);
    let answer = raw::exchange(
        check,
        &format!(
            "GET / HTTP/1.1\r\nHost: c\r\nX-Forwarded-Uri: {long}\r\nConnection: close\r\n\r\n"
        ),
    );
    assert_eq!(
        raw::status(&answer),
        400,
        "{}",
        &answer[..answer.len().min(300)]
    );
    assert!(answer.len() < 1024, "{} bytes", answer.len());
    assert!(answer.contains(&"x".repeat(200)) && !answer.contains(&"x".repeat(257)));
}

#[test]
fn heads_the_proxy_refuses_are_in_the_access_log() {
    let upstream = Upstream::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    let server = format!(
        "access_log_format = \"combined\"\naccess_log_file = \"{}\"",
        log.display()
    );
    let proxy = Proxy::start_with_server(&[&upstream.addr], &server, "");
    let bad = "GET /wp-login.php HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n";
    assert_eq!(raw::status(&raw::exchange(proxy.port, bad)), 400);
    let big = format!(
        "GET /big HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(100 * 1024)
    );
    assert_eq!(raw::status(&raw::exchange(proxy.port, &big)), 431);
    let deadline = Instant::now() + Duration::from_secs(5);
    let text = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.lines().count() >= 2 || Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        text.contains("\"GET /wp-login.php HTTP/1.1\" 400 "),
        "{text}"
    );
    assert!(text.contains("\"GET /big HTTP/1.1\" 431 "), "{text}");
    assert!(
        text.lines().all(|l| l.starts_with("127.0.0.1 - - [")),
        "{text}"
    );
}

/// The resident memory of process `pid`, in kB.
fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn fifty_thousand_streams_on_one_rls_connection_are_refused_past_the_cap() {
    let upstream = Upstream::start();
    let (proxy, port, _rules) = with_rls(&upstream, "");
    let idle = rss_kb(proxy.pid());
    let mut conn = handshake(port);
    let mut reader = conn.try_clone().unwrap();
    let frames = std::thread::spawn(move || {
        let (mut refused, mut goaway) = (0, false);
        while let Ok(f) = read_frame(&mut reader) {
            refused += usize::from(f.reset_code() == Some(REFUSED_STREAM));
            goaway |= f.kind == GOAWAY;
        }
        (refused, goaway)
    });
    let mut batch = Vec::new();
    let mut sent = 0;
    for stream in (1..100_000u32).step_by(2) {
        batch.extend(call_headers(stream));
        if batch.len() > 64 * 1024 || stream == 99_999 {
            if conn.write_all(&batch).is_err() {
                break;
            }
            batch.clear();
            sent = stream / 2 + 1;
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    let grown_kb = rss_kb(proxy.pid()).saturating_sub(idle);
    let _ = conn.shutdown(std::net::Shutdown::Both);
    let (refused, goaway) = frames.join().unwrap();
    eprintln!("{sent} streams sent, {refused} refused, goaway {goaway}, RSS +{grown_kb} kB");
    assert!(refused > 0, "streams past the cap are refused");
    assert!(grown_kb < 50 * 1024, "RSS grew {grown_kb} kB");
    // The service still answers.
    let mut fresh = handshake(port);
    fresh.write_all(&call_headers(1)).unwrap();
}

#[test]
fn a_half_sent_preface_and_a_silent_stream_on_rls_are_closed_in_time() {
    let upstream = Upstream::start();
    let (_proxy, port, _rules) = with_rls(&upstream, "header_timeout = \"1s\"");
    let mut half = TcpStream::connect(("127.0.0.1", port)).unwrap();
    half.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    half.write_all(&frames::PREFACE[..12]).unwrap();
    let (_, after) = until_closed(&mut half);
    assert!(
        after > Duration::from_millis(800) && after < Duration::from_secs(3),
        "{after:?}"
    );

    let mut conn = handshake(port);
    conn.write_all(&call_headers(1)).unwrap();
    let started = Instant::now();
    let ended = loop {
        let f = read_frame(&mut conn).expect("the stream ends before the connection");
        let ends = f.kind == frames::RST_STREAM || f.flags & frames::END_STREAM != 0;
        if f.stream == 1 && ends {
            break started.elapsed();
        }
    };
    assert!(
        ended > Duration::from_millis(800) && ended < Duration::from_secs(3),
        "{ended:?}"
    );
}

#[test]
fn past_max_connections_rls_closes_new_connections() {
    let upstream = Upstream::start();
    let (_proxy, port, _rules) = with_rls(&upstream, "max_connections = 3");
    let mut held: Vec<TcpStream> = (0..3).map(|_| raw::connect(port)).collect();
    std::thread::sleep(Duration::from_millis(100));
    let (_, after) = until_closed(&mut raw::connect(port));
    assert!(after < Duration::from_secs(1), "{after:?}");
    assert!(held.iter_mut().all(still_open));
    drop(held.pop());
    std::thread::sleep(Duration::from_millis(200));
    let mut fresh = handshake(port);
    assert!(still_open(&mut fresh));
}
