//! The browser harness itself (tests/common/browser.rs): a real headless Chromium follows a
//! script redirect and a meta refresh with their queries intact, times them, reads statuses
//! (200, 403) and cookies (an HttpOnly one set by the server, one set by the plan), and
//! reports a wait that never ends as timed out. The pages come from a tiny server here.

use crate::common;

use common::browser::{Cookie, Plan};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The requests the site received: (target, Cookie header).
type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// A site of four pages on a free loopback port, served until the test ends.
struct Site {
    origin: String,
    seen: Seen,
}

impl Site {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the site");
        let origin = format!("http://{}", listener.local_addr().expect("address"));
        let seen = Seen::default();
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let log = log.clone();
                std::thread::spawn(move || serve(stream, &log));
            }
        });
        Self { origin, seen }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin)
    }

    /// The targets requested, in order.
    fn targets(&self) -> Vec<String> {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.iter().map(|(target, _)| target.clone()).collect()
    }

    /// The Cookie header of the last request for `path`.
    fn cookie_sent_to(&self, path: &str) -> Option<String> {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let last = seen
            .iter()
            .rev()
            .find(|(target, _)| target.starts_with(path));
        last.and_then(|(_, cookie)| cookie.clone())
    }
}

/// Answers one request (the connection is closed after it).
fn serve(stream: TcpStream, seen: &Seen) {
    let mut reader = BufReader::new(&stream);
    let mut request_line = String::new();
    // Chromium opens spare connections it may never send a request on.
    let Some(target) = reader
        .read_line(&mut request_line)
        .ok()
        .and_then(|_| request_line.split(' ').nth(1))
        .map(str::to_owned)
    else {
        return;
    };
    let mut cookie = None;
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line.trim() != "" {
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("cookie") {
                cookie = Some(value.trim().to_owned());
            }
        }
        line.clear();
    }
    seen.lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((target.clone(), cookie));
    let _ = (&stream).write_all(answer(target.split('?').next().unwrap_or("/")).as_bytes());
}

/// The page at `path`, a whole HTTP/1.1 response.
fn answer(path: &str) -> String {
    let (status, extra, body) = match path {
        "/start" => (
            "200 OK",
            "",
            "<title>Start</title><p>starting<script>\
             setTimeout(() => location.replace('/landed?x=1&y=2'), 200)</script>",
        ),
        "/refresh" => (
            "200 OK",
            "",
            "<title>Refresh</title><meta http-equiv=\"refresh\" \
             content=\"1; url=/landed?from=refresh\"><p>refreshing",
        ),
        "/landed" => (
            "200 OK",
            "Set-Cookie: t=1; Path=/; HttpOnly\r\n",
            "<title>Landed</title><p>Welcome",
        ),
        "/forbidden" => ("403 Forbidden", "", "<title>No</title><p>Forbidden here"),
        _ => ("404 Not Found", "", "<p>nothing"),
    };
    let body = format!("<!doctype html><html><head><meta charset=\"utf-8\">{body}</html>");
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n{extra}\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[test]
fn a_script_redirect_and_a_meta_refresh_land_with_their_queries_timed() {
    let site = Site::start();
    let landed = site.url("/landed");
    let report = Plan::new()
        .visit(site.url("/start"))
        .until_url_prefix(&landed)
        .visit(site.url("/refresh"))
        .until_url_prefix(&landed)
        .run();

    let (script, refresh) = (&report.steps[0], &report.steps[1]);
    assert_eq!(script.url, site.url("/landed?x=1&y=2"));
    assert_eq!(refresh.url, site.url("/landed?from=refresh"));
    for step in [script, refresh] {
        assert!(!step.timed_out, "{step:?}");
        assert_eq!(step.status, Some(200), "{step:?}");
        assert_eq!(step.title, "Landed");
        assert_eq!(step.text, "Welcome");
    }
    assert!((200..10_000).contains(&script.millis), "{script:?}");
    assert!((1_000..10_000).contains(&refresh.millis), "{refresh:?}");
    let statuses: Vec<(String, u16)> = script
        .documents
        .iter()
        .map(|d| (d.url.clone(), d.status))
        .collect();
    assert_eq!(
        statuses,
        [
            (site.url("/start"), 200),
            (site.url("/landed?x=1&y=2"), 200)
        ]
    );

    let cookie = report.cookie("t").expect("the landing page's cookie");
    assert_eq!((cookie.value.as_str(), cookie.path.as_str()), ("1", "/"));
    assert_eq!(cookie.domain, "127.0.0.1");
    assert!(cookie.http_only && !cookie.secure && cookie.expiry.is_none());
    assert_eq!(
        site.targets(),
        [
            "/start",
            "/landed?x=1&y=2",
            "/refresh",
            "/landed?from=refresh"
        ],
        "only the pages, never a favicon"
    );
}

#[test]
fn statuses_plan_cookies_and_a_wait_that_times_out_are_reported() {
    let site = Site::start();
    let report = Plan::new()
        .cookie(Cookie::new("pass", "abc", "127.0.0.1"))
        .javascript(false)
        .visit(site.url("/forbidden"))
        .visit(site.url("/start"))
        .until_url_prefix(site.url("/landed"))
        .step_timeout(Duration::from_millis(500))
        .run();

    let forbidden = &report.steps[0];
    assert_eq!(forbidden.status, Some(403), "{forbidden:?}");
    assert_eq!(
        (forbidden.title.as_str(), forbidden.text.as_str()),
        ("No", "Forbidden here")
    );
    assert!(!forbidden.timed_out);
    assert_eq!(
        site.cookie_sent_to("/forbidden").as_deref(),
        Some("pass=abc")
    );

    let stuck = &report.steps[1];
    assert!(stuck.timed_out, "no script, no redirect: {stuck:?}");
    assert_eq!(stuck.url, site.url("/start"));
    assert_eq!((stuck.status, stuck.title.as_str()), (Some(200), "Start"));
    assert!((500..10_000).contains(&stuck.millis), "{stuck:?}");

    let pass = report.cookie("pass").expect("the plan's cookie");
    assert_eq!(pass, &Cookie::new("pass", "abc", "127.0.0.1"));
}
