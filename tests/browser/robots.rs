//! robots.txt's trap meets a real browser (issue 84: "a browser made to fetch it is not"
//! banned): an address reads /robots.txt, then headless Chromium from the same address loads
//! a page whose `<img>` points at the trap. The browser's request for the trap is spared
//! (404, counted `spared`), and the address is still served, to Chromium and to curl with a
//! browser's User-Agent.

use crate::common;

use common::browser::Plan;
use common::Proxy;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::time::Duration;

const TRAP: &str = "/.well-known/floodgate-trap/";
/// What the backend's page says, beside its image pointing at the trap.
const PAGE: &str = "<!doctype html><title>Bait</title><p>a page\
                    <img src=\"/.well-known/floodgate-trap/x.png\">";
/// Firefox on Linux, as curl sends it.
const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0";

/// A backend answering [`PAGE`] to every request, one per connection, until the test ends.
fn page_backend() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the backend");
    let addr = listener.local_addr().expect("address").to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || answer(stream));
        }
    });
    addr
}

fn answer(stream: TcpStream) {
    let mut reader = BufReader::new(&stream);
    let mut line = String::new();
    // The request head, to its blank line (a spare connection sends nothing).
    while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line.trim() != "" {
        line.clear();
    }
    let _ = (&stream).write_all(
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{PAGE}",
            PAGE.len()
        )
        .as_bytes(),
    );
}

/// curl's status for `url` as `agent`.
fn curl(url: &str, agent: &str) -> u16 {
    let out = Command::new("curl")
        .args([
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--max-time",
            "10",
        ])
        .args(["-A", agent, url])
        .output()
        .expect("curl runs");
    String::from_utf8_lossy(&out.stdout).parse().unwrap_or(0)
}

#[test]
fn a_browser_made_to_fetch_the_trap_after_its_address_read_robots_txt_is_spared() {
    let backend = page_backend();
    let config = format!(
        "[robots]\nsource = \"managed\"\n\
         groups = {{ \"ai-crawler\" = {{ disallow = [\"/\"] }} }}\ntrap = \"{TRAP}\"\n"
    );
    let proxy = Proxy::start_with_server(&[&backend], "access_log = true", &config);
    let robots = reqwest::blocking::get(proxy.url("/robots.txt")).expect("robots.txt");
    assert_eq!(robots.status(), 200);
    assert!(robots.text().unwrap_or_default().contains(TRAP));

    let report = Plan::new()
        .visit(proxy.url("/page"))
        .visit(proxy.url("/"))
        .timeout(Duration::from_secs(60))
        .run();
    let trap = proxy.url("/.well-known/floodgate-trap/x.png");
    assert!(report.requests.contains(&trap), "{:?}", report.requests);
    for step in &report.steps {
        assert_eq!(
            (step.status, step.title.as_str()),
            (Some(200), "Bait"),
            "{step:?}"
        );
    }
    assert!(
        proxy
            .log()
            .lines()
            .any(|l| l.contains(&format!("GET {TRAP}x.png status=404 "))),
        "{}",
        proxy.log()
    );
    assert_eq!(curl(&proxy.url("/"), FIREFOX), 200);
    let spared = "floodgate_robots_trap_total{result=\"spared\"}";
    assert!(proxy.metric(spared) >= 1.0);
    assert_eq!(
        proxy.metric("floodgate_robots_trap_total{result=\"banned\"}"),
        0.0
    );
}
