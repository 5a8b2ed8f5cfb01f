//! What a hostile probe does over HTTP/2, with real clients (`probe.py`, on Python's `h2`, and
//! curl) over h2c and TLS: a connection that never asks is closed at `header_timeout`, PINGs
//! and WINDOW_UPDATEs notwithstanding, and counts against the connection cap meanwhile; frames
//! past the fingerprint's caps decline it, the cap is named in the log, and the request is
//! scored as a mismatch, never let off.

use super::{curl, probe, H2Proxy};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// An h2c connection to `port` that sends the preface and an empty SETTINGS frame, and nothing
/// more.
fn silent_h2c(port: u16) -> TcpStream {
    let mut conn = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let mut hello = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    hello.extend_from_slice(&[0, 0, 0, 0x4, 0, 0, 0, 0, 0]);
    conn.write_all(&hello).expect("send the preface");
    conn
}

/// How long `conn` stayed open from `since`, reading (and dropping) what the server sends, at
/// most `limit`.
fn open_for(conn: &mut TcpStream, since: Instant, limit: Duration) -> Duration {
    conn.set_read_timeout(Some(limit)).unwrap();
    let mut buf = [0u8; 4096];
    while since.elapsed() < limit {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
    since.elapsed()
}

/// Waits until the proxy's listener holds `count` open connections.
fn open_connections_reach(h2: &H2Proxy, count: f64) {
    let reached = crate::common::wait::eventually(Duration::from_secs(5), || {
        h2.proxy.metric("floodgate_connections_open") == count
    });
    assert!(reached, "{count} connections open");
}

#[test]
fn an_http2_connection_that_never_asks_is_closed_at_header_timeout_and_counted_meanwhile() {
    let h2 = H2Proxy::start_with("header_timeout = \"1s\"\nmax_connections_per_ip = 4", "");
    let port = h2.proxy.port;
    let limit = Duration::from_secs(5);
    open_connections_reach(&h2, 0.0); // the harness's readiness probe closes
    let since = Instant::now();
    let mut silent: Vec<_> = (0..4).map(|_| silent_h2c(port)).collect();
    // Idle HTTP/2 connections count against the cap: a fifth is closed at once.
    open_connections_reach(&h2, 4.0);
    let mut fifth = silent_h2c(port);
    open_for(&mut fifth, Instant::now(), limit);
    let refused = "floodgate_connections_refused_total{reason=\"per_ip\"}";
    assert_eq!(h2.proxy.metric(refused), 1.0, "the fifth was refused");
    for conn in &mut silent {
        let open = open_for(conn, since, limit);
        assert!(
            open >= Duration::from_millis(900) && open < limit,
            "closed after {open:?}, header_timeout is 1 s"
        );
    }
    // Real clients, both listeners at once: PINGs and WINDOW_UPDATEs hold no connection open,
    // and a first request within the deadline keeps one (idle past header_timeout after it).
    let runs: Vec<_> = [
        ("h2c", "silent"),
        ("tls", "silent"),
        ("h2c", "late"),
        ("tls", "late"),
    ]
    .into_iter()
    .map(|(mode, action)| {
        let port = h2.port(mode);
        let args: &[&str] = match action {
            "silent" => &["silent", "5"],
            _ => &["late", "0.3", "1.5"],
        };
        std::thread::spawn(move || (mode, action, probe(mode, port, args)))
    })
    .collect();
    for run in runs {
        let (mode, action, printed) = run.join().unwrap();
        match action {
            "silent" => {
                let open: f64 = printed.parse().unwrap_or(f64::MAX);
                assert!((0.9..4.0).contains(&open), "{mode}: {printed}");
            }
            _ => assert_eq!(printed, "200 200", "{mode}"),
        }
    }
    assert_eq!(
        curl(&["--http2-prior-knowledge"], &h2.proxy.url("/after")),
        "200 2"
    );
}

/// The score, the signals and the access log's `h2fp` part of the request to `path`.
fn scored(h2: &H2Proxy, path: &str) -> (String, String, String) {
    let told = |name| h2.upstream.last_header(name).join(",");
    let log = h2.proxy.log();
    let line = log
        .lines()
        .find(|l| l.contains(&format!("GET {path} status=")))
        .unwrap_or_else(|| panic!("no line for {path}:\n{log}"));
    let h2fp = line
        .split(' ')
        .find(|part| part.starts_with("h2fp"))
        .unwrap_or("-")
        .to_owned();
    (told("x-bot-score"), told("x-bot-signals"), h2fp)
}

#[test]
fn frames_past_the_fingerprints_caps_decline_it_and_are_scored_as_a_mismatch() {
    let h2 = H2Proxy::start("score_header = \"x-bot-score\"\nsignals_header = \"x-bot-signals\"");
    let agent =
        "user-agent:Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
                 Chrome/156.0.0.0 Safari/537.36";
    let settings = "1:4096;2:1;4:65535";
    let floods = [
        ("h2c", "none", "0", "h2fp=1:4096;2:1;4:65535|00|0|m,a,s,p"),
        ("h2c", "ping", "1100", "h2fp_declined=frames"),
        ("h2c", "unknown", "1100", "h2fp_declined=frames"),
        ("h2c", "kib", "80", "h2fp_declined=bytes"),
        ("tls", "ping", "1100", "h2fp_declined=frames"),
    ];
    for (mode, kind, count, logged) in floods {
        let path = format!("/{mode}/{kind}");
        let args = [
            "flood",
            kind,
            count,
            settings,
            "GET",
            &path,
            agent,
            "accept-language:en",
        ];
        assert_eq!(probe(mode, h2.port(mode), &args), "200", "{path}");
        let (score, signals, h2fp) = scored(&h2, &path);
        assert_eq!(h2fp, logged, "{path}");
        match mode {
            "h2c" => assert_eq!((&*score, &*signals), ("40", "ua-h2-mismatch"), "{path}"),
            _ => assert!(signals.contains("ua-h2-mismatch"), "{path}: {signals}"),
        }
    }
}
