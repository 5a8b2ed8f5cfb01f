//! The issuer's keys from its directory, served over http on loopback by the test: tokens of
//! the key it lists redeem; when it lists the next key instead (a rotation), the next read
//! (`refresh = "1s"`) puts that key in force, its tokens redeem and the old key's are unknown.

use crate::common::wait::within;
use crate::common::{Proxy, Upstream};
use crate::issuer::{directory_json, TestIssuer};
use crate::tokens::{
    challenge, challenged, config, counted, load, offered, pass_cookie, presenting, ISSUER,
};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// An issuer's directory on loopback: every request gets the JSON of the moment.
struct Directory {
    addr: String,
    json: Arc<Mutex<String>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Directory {
    /// Serving `json`.
    fn start(json: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the directory");
        listener.set_nonblocking(true).expect("non-blocking");
        let addr = listener.local_addr().expect("its address").to_string();
        let (json, stop) = (Arc::new(Mutex::new(json)), Arc::new(AtomicBool::new(false)));
        let (served, stopping) = (json.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !stopping.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => answer(stream, &served.lock().unwrap().clone()),
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Self {
            addr,
            json,
            stop,
            thread: Some(thread),
        }
    }

    /// Serves `json` from now on.
    fn list(&self, json: String) {
        *self.json.lock().unwrap() = json;
    }

    fn url(&self) -> String {
        format!(
            "http://{}/.well-known/private-token-issuer-directory",
            self.addr
        )
    }
}

impl Drop for Directory {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Reads one request's head from `stream` and answers `json`, closing the connection.
fn answer(mut stream: TcpStream, json: &str) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let answer = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/private-token-issuer-directory\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{json}",
        json.len()
    );
    let _ = stream.write_all(answer.as_bytes());
}

/// Waits (up to 5 s) until a page load is offered `signer`'s key.
fn offering(proxy: &Proxy, signer: &TestIssuer) -> Duration {
    let key = signer.token_key();
    let took = within(Duration::from_secs(5), || {
        let offers = offered(&load(proxy, &[]));
        offers.iter().any(|(_, offered)| *offered == key)
    });
    took.unwrap_or_else(|| panic!("the key is not offered: {}", proxy.log()))
}

#[test]
fn a_rotated_key_is_taken_after_a_refresh_and_the_old_one_is_unknown() {
    let (a, b) = (TestIssuer::a(), TestIssuer::b());
    let directory = Directory::start(directory_json(&[(&a, None)]));
    let upstream = Upstream::start();
    let keys = format!("directory = \"{}\"\nrefresh = \"1s\"", directory.url());
    let proxy = Proxy::start(&[&upstream.addr], &config(&keys));
    eprintln!("a offered after {:?}", offering(&proxy, &a));
    let by_a = a.mint(&challenge(&proxy, &a));
    let served = presenting(&proxy, &by_a);
    assert_eq!(served.status(), 200, "a's token, a listed");
    assert!(pass_cookie(&served).is_some());

    directory.list(directory_json(&[(&b, None)]));
    eprintln!("b offered after {:?}", offering(&proxy, &b));
    let by_b = b.mint(&challenge(&proxy, &b));
    assert_eq!(
        presenting(&proxy, &by_b).status(),
        200,
        "b's token, b listed"
    );
    let late_a = a.mint(&challenge(&proxy, &b));
    challenged(presenting(&proxy, &late_a), &b);
    assert_eq!(counted(&proxy, ISSUER, "redeemed"), 2.0);
    assert_eq!(counted(&proxy, "unknown", "unknown_key"), 1.0);
    assert_eq!(upstream.served(), 2);
}

#[test]
fn a_reload_keeps_the_keys_last_read_while_the_directory_is_down() {
    let a = TestIssuer::a();
    let directory = Directory::start(directory_json(&[(&a, None)]));
    let upstream = Upstream::start();
    let keys = format!("directory = \"{}\"\nrefresh = \"1s\"", directory.url());
    let proxy = Proxy::start(&[&upstream.addr], &config(&keys));
    offering(&proxy, &a);
    directory.list("down for maintenance".into());
    proxy.reload("success");
    let token = a.mint(&challenge(&proxy, &a));
    assert_eq!(presenting(&proxy, &token).status(), 200, "a's key kept");
}
