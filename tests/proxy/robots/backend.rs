//! `source = "backend"` (the default): the proxy serves and enforces the backend's robots.txt
//! with the trap written in, follows it when it changes (after `refresh`), and a 404 for it
//! means no rules. The backend is a small server whose robots.txt the test rewrites.

use super::{get, status, CURL, DENY_DISALLOWED};
use crate::common::wait::within;
use crate::common::Proxy;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The status and body the backend answers `/robots.txt` with.
type File = Arc<Mutex<(u16, String)>>;

/// A backend answering `/robots.txt` with what the test sets and `200 ok` to anything else,
/// one request a connection; its thread ends with the test process.
struct Site {
    addr: String,
    file: File,
    /// The `Host` of each request for `/robots.txt`.
    hosts: Arc<Mutex<Vec<String>>>,
}

impl Site {
    fn start(status: u16, body: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the backend");
        let addr = listener.local_addr().expect("address").to_string();
        let file: File = Arc::new(Mutex::new((status, body.to_owned())));
        let hosts = Arc::new(Mutex::new(Vec::new()));
        let (serving, seen) = (file.clone(), hosts.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (file, hosts) = (serving.clone(), seen.clone());
                std::thread::spawn(move || answer(stream, &file, &hosts));
            }
        });
        Self { addr, file, hosts }
    }

    fn set(&self, status: u16, body: &str) {
        *self.file.lock().unwrap() = (status, body.to_owned());
    }
}

/// Reads one request head from `stream` and answers it.
fn answer(mut stream: TcpStream, file: &File, hosts: &Mutex<Vec<String>>) {
    let mut head = Vec::new();
    let mut reader = BufReader::new(&stream);
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) if line == "\r\n" => break,
            Ok(_) => head.push(line),
        }
    }
    let target = head.first().and_then(|l| l.split(' ').nth(1)).unwrap_or("");
    let (code, body) = match target {
        "/robots.txt" => {
            hosts
                .lock()
                .unwrap()
                .push(header_in(&head, "host").to_owned());
            file.lock().unwrap().clone()
        }
        _ => (200, "ok".to_owned()),
    };
    let reply = format!(
        "HTTP/1.1 {code} X\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(reply.as_bytes());
}

/// The value of header `name` in the request `head` (its lines), empty if absent.
fn header_in<'h>(head: &'h [String], name: &str) -> &'h str {
    let mut fields = head.iter().filter_map(|line| line.split_once(':'));
    let found = fields.find(|(field, _)| field.eq_ignore_ascii_case(name));
    found.map_or("", |(_, value)| value.trim())
}

/// The file `proxy` serves, once `done` holds of it (within 3 s).
fn served_once(proxy: &Proxy, done: impl Fn(&str) -> bool) -> String {
    let mut file = String::new();
    let held = within(Duration::from_secs(3), || {
        file = get(proxy, "127.0.0.1", "/robots.txt", CURL)
            .text()
            .unwrap_or_default();
        done(&file)
    });
    assert!(held.is_some(), "the proxy serves:\n{file}");
    file
}

#[test]
fn the_backends_file_is_served_with_the_trap_and_followed_after_refresh() {
    let site = Site::start(200, "User-agent: *\nDisallow: /private/\n");
    let config = format!(
        "[robots]\nrefresh = \"1s\"\ntrap = \"/.well-known/floodgate-trap/\"\n{DENY_DISALLOWED}"
    );
    let proxy = Proxy::start(&[&site.addr], &config);
    let file = served_once(&proxy, |f| f.contains("/private/"));
    let star: Vec<&str> = file.lines().collect();
    assert!(star.contains(&"User-agent: *"), "{file}");
    assert!(star.contains(&"Disallow: /private/"), "{file}");
    assert!(
        star.contains(&"Disallow: /.well-known/floodgate-trap/"),
        "{file}"
    );
    assert_eq!(status(&proxy, "127.0.0.1", "/private/x", CURL), 403);
    assert_eq!(status(&proxy, "127.0.0.1", "/public/x", CURL), 200);
    let hosts = site.hosts.lock().unwrap().clone();
    assert!(
        !hosts.is_empty() && hosts.iter().all(|h| *h == site.addr),
        "{hosts:?}"
    );

    // The backend's file changes: followed after `refresh`.
    site.set(200, "User-agent: *\nDisallow: /secret/\n");
    let file = served_once(&proxy, |f| f.contains("/secret/"));
    assert!(!file.contains("/private/"), "{file}");
    assert_eq!(status(&proxy, "127.0.0.1", "/private/x", CURL), 200);
    assert_eq!(status(&proxy, "127.0.0.1", "/secret/x", CURL), 403);

    // A 404: no rules, everything allowed; the trap is still disallowed.
    site.set(404, "not here");
    let file = served_once(&proxy, |f| !f.contains("/secret/"));
    assert!(
        file.contains("Disallow: /.well-known/floodgate-trap/"),
        "{file}"
    );
    assert!(!file.contains("not here"), "{file}");
    assert_eq!(status(&proxy, "127.0.0.1", "/secret/x", CURL), 200);
}
