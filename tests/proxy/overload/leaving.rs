//! Issue 82, item 1: a client that goes away does not give its slot back while the backend
//! still works on its request. Rounds of 40 connections send `GET /slow` (a second of one of
//! the backend's 8 workers) and leave 0.2 s later, over HTTP/1 (their connections closed) and
//! over one h2c connection (`RST_STREAM(CANCEL)` on each stream): with `max_in_flight = 8` the
//! backend never holds more than 8, and the slots come back once the backend's answers end,
//! long before `read_timeout`. Before, every departure freed a slot at once: the backend held
//! every request sent. And a URL that hangs, routed to a pool of its own, holds that pool's
//! slots until `read_timeout` and leaves the default pool's to everyone else. None of this
//! depends on timing (the backend's count is the verdict), so these run beside other tests.

use super::load::client;
use crate::common::capacity::Capacity;
use crate::common::{wait, Proxy};
use crate::hardening::frames::{frame, handshake, HEADERS, RST_STREAM};
use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

const WORKERS: usize = 8;
const SERVICE: Duration = Duration::from_millis(40);
/// Clients that leave, per round.
const CLIENTS: usize = 40;
const ROUNDS: usize = 2;
const LEAVE_AFTER: Duration = Duration::from_millis(200);
const IN_FLIGHT: &str = "floodgate_overload_in_flight{pool=\"default\"}";

/// `read_timeout` far beyond `/slow`: the slots must come back when the answers end.
fn settings() -> String {
    format!("read_timeout = \"30s\"\n\n[overload]\nmax_in_flight = {WORKERS}\n")
}

/// Waits until the backend and the proxy hold nothing; asserts the backend never held more
/// than the limit, and that the slots came back within seconds (not `read_timeout`).
fn assert_held_to_the_limit(backend: &Capacity, proxy: &Proxy, what: &str) {
    let left = Instant::now();
    let settled = wait::within(Duration::from_secs(10), || {
        backend.held() == 0 && proxy.metric(IN_FLIGHT) == 0.0
    });
    eprintln!(
        "{what}: the backend held at most {} and served {}; all back {:?} after the last left",
        backend.most_held(),
        backend.served(),
        settled.map(|_| left.elapsed())
    );
    assert!(
        backend.most_held() <= WORKERS,
        "{what}: the backend held {} at once",
        backend.most_held()
    );
    assert!(settled.is_some(), "{what}: slots still held");
}

#[test]
fn http1_clients_that_leave_keep_their_slots_until_the_backend_is_done() {
    let backend = Capacity::start(WORKERS, SERVICE);
    let proxy = Proxy::start(&[&backend.addr], &settings());
    let mut held_after_leaving = 0.0f64;
    for _ in 0..ROUNDS {
        let connections: Vec<TcpStream> = (0..CLIENTS)
            .map(|_| {
                let mut c = TcpStream::connect(("127.0.0.1", proxy.port)).expect("connect");
                c.write_all(b"GET /slow HTTP/1.1\r\nHost: app\r\n\r\n")
                    .expect("send");
                c
            })
            .collect();
        std::thread::sleep(LEAVE_AFTER);
        drop(connections);
        std::thread::sleep(Duration::from_millis(50));
        held_after_leaving = held_after_leaving.max(proxy.metric(IN_FLIGHT));
    }
    assert_held_to_the_limit(&backend, &proxy, "HTTP/1");
    // The clients were gone, the backend still working: the slots were still taken.
    assert!(held_after_leaving >= 1.0, "in flight {held_after_leaving}");
}

/// `HEADERS` opening `stream` as `GET path`, the request complete.
fn get(stream: u32, path: &str) -> Vec<u8> {
    // :method GET and :scheme http, indexed; :path and :authority literal with indexed names.
    let mut block = vec![0x82, 0x86, 0x04, path.len() as u8];
    block.extend_from_slice(path.as_bytes());
    block.extend_from_slice(&[0x01, 3]);
    block.extend_from_slice(b"app");
    // END_STREAM | END_HEADERS.
    frame(HEADERS, 0x1 | 0x4, stream, &block)
}

#[test]
fn http2_streams_reset_keep_their_slots_until_the_backend_is_done() {
    let backend = Capacity::start(WORKERS, SERVICE);
    let proxy = Proxy::start_with_server(&[&backend.addr], "h2c = true", &settings());
    let mut conn = handshake(proxy.port);
    const CANCEL: u32 = 0x8;
    for round in 0..ROUNDS {
        let streams: Vec<u32> = (0..CLIENTS)
            .map(|i| 1 + 2 * (round * CLIENTS + i) as u32)
            .collect();
        let opened: Vec<u8> = streams.iter().flat_map(|&s| get(s, "/slow")).collect();
        conn.write_all(&opened).expect("open the streams");
        std::thread::sleep(LEAVE_AFTER);
        let reset = CANCEL.to_be_bytes();
        let resets: Vec<u8> = streams
            .iter()
            .flat_map(|&s| frame(RST_STREAM, 0, s, &reset))
            .collect();
        conn.write_all(&resets).expect("reset the streams");
    }
    // The connection stays open: only the streams went away.
    assert_held_to_the_limit(&backend, &proxy, "HTTP/2");
    drop(conn);
}

#[test]
fn a_url_that_hangs_in_a_pool_of_its_own_leaves_the_others_their_slots() {
    // 12 requests to /hang, a URL that never answers, hold the `slow` pool's 4 slots until
    // read_timeout; the customer's requests go to the default pool and are served.
    let backend = Capacity::start(WORKERS, SERVICE);
    let extra = format!(
        "read_timeout = \"2s\"\n\n\
         [upstream.pools.slow]\nbackends = [\"{}\"]\n\n\
         [[route]]\nmatch = {{ path_prefix = \"/hang\" }}\npool = \"slow\"\n\n\
         [overload]\nmax_in_flight = 4\n",
        backend.addr
    );
    let proxy = Proxy::start(&[&backend.addr], &extra);
    let slow = "floodgate_overload_in_flight{pool=\"slow\"}";
    std::thread::scope(|scope| {
        let hanging: Vec<_> = (0..12)
            .map(|_| {
                scope.spawn(|| {
                    client()
                        .get(proxy.url("/hang"))
                        .send()
                        .map_or(0, |r| r.status().as_u16())
                })
            })
            .collect();
        assert!(
            wait::within(Duration::from_secs(2), || proxy.metric(slow) == 4.0).is_some(),
            "the hanging requests hold {} slots",
            proxy.metric(slow)
        );
        let customer = client();
        let served: Vec<u16> = (0..10)
            .map(|_| {
                let answer = customer.get(proxy.url("/api/orders")).send();
                answer.map_or(0, |r| r.status().as_u16())
            })
            .collect();
        assert!(served.iter().all(|s| *s == 200), "{served:?}");
        let statuses: Vec<u16> = hanging.into_iter().map(|h| h.join().unwrap()).collect();
        // 4 time out at the backend (504); 8 waited for a slot past queue_time (503).
        let timed_out = statuses.iter().filter(|s| **s == 504).count();
        assert_eq!(timed_out, 4, "{statuses:?}");
    });
}
