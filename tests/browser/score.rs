//! The bot score over Floodgate's own TLS listener, with real clients: curl and Python sending
//! Chrome's User-Agent show `ua-tls-mismatch`, score 50 or more and are denied by a
//! `min_score = 50` policy; headless Chromium with Chrome's User-Agent scores under 50 and is
//! served, and with its own HeadlessChrome one shows `headless`; curl's own User-Agent shows
//! no mismatch; curl's HTTP/2 (curl asks for h2 over TLS) with Chrome's User-Agent shows
//! `ua-h2-mismatch`; the backend is told the score and the signals. And what a client impersonating
//! Chrome's TLS (PyPI `curl_cffi`) still shows, measured.

use crate::common;

use common::browser::Plan;
use common::certs::make_certificates;
use common::pytools::python;
use common::{free_port, Proxy, Upstream};
use std::process::Command;

/// The User-Agent of Chrome 156 on Linux.
const CHROME_UA: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
                         Chrome/156.0.0.0 Safari/537.36";

/// A proxy with a TLS listener (its certificates in `_dir`) that denies a score of 50 or more
/// and tells the backend the score in `x-bot-score`, the signals in `x-bot-signals`.
struct ScoringProxy {
    upstream: Upstream,
    proxy: Proxy,
    tls_port: u16,
    _dir: tempfile::TempDir,
}

impl ScoringProxy {
    fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        make_certificates(dir.path());
        let file = |name: &str| dir.path().join(name).display().to_string();
        let upstream = Upstream::start();
        let tls_port = free_port();
        let server = format!(
            "tls_listen = \"127.0.0.1:{tls_port}\"\ntls_cert_file = \"{}\"\n\
             tls_key_file = \"{}\"\naccess_log = true\nheader_timeout = \"2s\"",
            file("server.pem"),
            file("server.key")
        );
        let extra = "score_header = \"x-bot-score\"\nsignals_header = \"x-bot-signals\"\n\n\
                     [[policy]]\nname = \"bots\"\naction = \"deny\"\nmatch = { min_score = 50 }\n";
        let proxy = Proxy::start_with_server(&[&upstream.addr], &server, extra);
        Self {
            upstream,
            proxy,
            tls_port,
            _dir: dir,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.tls_port)
    }

    /// The score and signals the access log gives the request for `path`.
    fn logged(&self, path: &str) -> (u8, String) {
        let request = format!("GET {path} ");
        let log = self.proxy.log_when(|log| log.contains(&request));
        let line = log
            .lines()
            .rev()
            .find(|l| l.contains(&request))
            .unwrap_or_else(|| panic!("no log line for {path}:\n{log}"));
        let field = |name: &str| {
            let at = line.find(&format!(" {name}=")).expect(name) + name.len() + 2;
            line[at..].split(' ').next().unwrap().to_owned()
        };
        (field("score").parse().unwrap(), field("signals"))
    }

    /// The score and signals the backend was told for the last request it got.
    fn told(&self) -> (u8, String) {
        let score = self.upstream.last_header("x-bot-score");
        let signals = self.upstream.last_header("x-bot-signals");
        assert_eq!(
            (score.len(), signals.len()),
            (1, 1),
            "{score:?} {signals:?}"
        );
        (score[0].parse().unwrap(), signals[0].clone())
    }
}

fn curl(url: &str, user_agent: Option<&str>) -> u16 {
    let mut command = Command::new("curl");
    command.args([
        "-sk",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "--max-time",
        "10",
    ]);
    if let Some(agent) = user_agent {
        command.args(["-A", agent]);
    }
    let out = command.arg(url).output().expect("curl runs");
    String::from_utf8_lossy(&out.stdout).parse().unwrap_or(0)
}

/// Python's `urllib` with `user_agent`, certificate checks off: the status.
fn python_urllib(url: &str, user_agent: &str) -> u16 {
    let script = r#"
import ssl, sys, urllib.request, urllib.error
context = ssl.create_default_context()
context.check_hostname = False
context.verify_mode = ssl.CERT_NONE
request = urllib.request.Request(sys.argv[1], headers={"User-Agent": sys.argv[2]})
try:
    print(urllib.request.urlopen(request, context=context, timeout=10).status)
except urllib.error.HTTPError as e:
    print(e.code)
"#;
    let out = Command::new("python3")
        .args(["-c", script, url, user_agent])
        .output()
        .expect("python runs");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

/// PyPI `curl_cffi` impersonating Chrome (its TLS ClientHello, HTTP/2 frames and headers):
/// the status.
fn curl_cffi_as_chrome(url: &str) -> u16 {
    let script = r#"
import sys
from curl_cffi import requests
print(requests.get(sys.argv[1], impersonate="chrome", verify=False, timeout=10).status_code)
"#;
    let out = Command::new(python())
        .args(["-c", script, url])
        .output()
        .expect("python runs");
    let status = String::from_utf8_lossy(&out.stdout).trim().parse();
    status.unwrap_or_else(|_| panic!("curl_cffi: {}", String::from_utf8_lossy(&out.stderr)))
}

fn chromium(url: &str, user_agent: Option<&str>) -> u16 {
    let mut plan = Plan::new().insecure_certs().visit(url);
    if let Some(agent) = user_agent {
        plan = plan.user_agent(agent);
    }
    let report = plan.run();
    report.steps.last().and_then(|s| s.status).unwrap_or(0)
}

#[test]
fn curl_and_python_posing_as_chrome_are_denied_and_chromium_is_served() {
    let proxy = ScoringProxy::start();
    assert_eq!(curl(&proxy.url("/curl-as-chrome"), Some(CHROME_UA)), 403);
    let (score, signals) = proxy.logged("/curl-as-chrome");
    eprintln!("curl as Chrome: {score} {signals}");
    assert!(score >= 50, "curl as Chrome: {score} {signals}");
    assert!(signals.contains("ua-tls-mismatch"), "{signals}");
    assert!(
        signals.contains("ua-h2-mismatch"),
        "curl's HTTP/2 is not Chrome's: {signals}"
    );

    assert_eq!(
        python_urllib(&proxy.url("/python-as-chrome"), CHROME_UA),
        403
    );
    let (score, signals) = proxy.logged("/python-as-chrome");
    eprintln!("python as Chrome: {score} {signals}");
    assert!(score >= 50, "python as Chrome: {score} {signals}");
    assert!(signals.contains("ua-tls-mismatch"), "{signals}");

    assert_eq!(chromium(&proxy.url("/chromium"), Some(CHROME_UA)), 200);
    let (score, signals) = proxy.told();
    eprintln!("Chromium as Chrome: {score} {signals}");
    assert!(score < 50, "Chromium as Chrome: {score} {signals}");
    assert!(!signals.contains("mismatch"), "{signals}");
    assert_eq!(proxy.logged("/chromium"), (score, signals));

    assert_eq!(curl(&proxy.url("/curl"), None), 200);
    let (score, signals) = proxy.told();
    eprintln!("curl as itself: {score} {signals}");
    assert!(
        !signals.contains("mismatch"),
        "curl as itself: {score} {signals}"
    );

    let metrics = proxy.proxy.admin("/metrics").unwrap().text().unwrap();
    let mismatches = common::series_value(
        &metrics,
        "floodgate_bot_signals_total{signal=\"ua-tls-mismatch\"}",
    );
    assert_eq!(mismatches, 2.0, "curl and python as Chrome");
}

#[test]
fn chromiums_own_headless_user_agent_shows_headless() {
    let proxy = ScoringProxy::start();
    assert_eq!(chromium(&proxy.url("/headless"), None), 200);
    let (score, signals) = proxy.told();
    eprintln!("HeadlessChrome: {score} {signals}");
    assert!(signals.contains("headless"), "{score} {signals}");
    assert!(!signals.contains("ua-tls-mismatch"), "{signals}");
}

/// What curl_cffi hides: its TLS ClientHello has Chrome's cipher list, its HTTP/2 frames are
/// Chrome's, and it sends the headers Chrome sends, so no signal of the User-Agent's layer
/// shows; measured 2026-11-28
/// (curl_cffi impersonate="chrome"): score 0, no signal. What it cannot hide is the network it
/// comes from (`hosting-network`), and its rate (the policies' buckets).
#[test]
fn curl_cffi_impersonating_chrome_shows_nothing_of_its_layers() {
    let proxy = ScoringProxy::start();
    assert_eq!(curl_cffi_as_chrome(&proxy.url("/curl-cffi")), 200);
    let (score, signals) = proxy.told();
    eprintln!("curl_cffi as Chrome: score={score} signals={signals}");
    assert_eq!((score, signals.as_str()), (0, "-"));
}
