//! The HTTP/2 fingerprint with real clients, over TLS (ALPN h2) and h2c: a Python client whose
//! first frames are chosen (tests/proxy/h2fp/client.py, on Python `h2`'s frame and HPACK
//! layers) and curl. What Floodgate tells the backend (`upstream.h2fp_header`) and logs
//! (`h2fp=`) equals what a reference reads from the very bytes sent
//! (tests/proxy/h2fp/reference.py); hundreds of SETTINGS entries and PRIORITY frames are served
//! and capped; HTTP/1 has none; `match.h2fp`, the source `h2fp`, and a reload that turns the
//! reading on. What a hostile probe does over both: `probes`.

use crate::common;

use common::certs::make_certificates;
use common::pytools::python;
use common::tap::Tap;
use common::{free_port, Proxy, Upstream};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A proxy with a TLS listener (certificates in `_dir`) and h2c on its plain one, logging each
/// request, with `upstream` extra keys `extra`.
pub(crate) struct H2Proxy {
    pub(crate) upstream: Upstream,
    pub(crate) proxy: Proxy,
    tls_port: u16,
    _dir: tempfile::TempDir,
}

impl H2Proxy {
    fn start(extra: &str) -> Self {
        Self::start_with("", extra)
    }

    /// The proxy with `[server]` keys `server_extra` too.
    pub(crate) fn start_with(server_extra: &str, extra: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        make_certificates(dir.path());
        let file = |name: &str| dir.path().join(name).display().to_string();
        let upstream = Upstream::start();
        let tls_port = free_port();
        let server = format!(
            "h2c = true\naccess_log = true\ntls_listen = \"127.0.0.1:{tls_port}\"\n\
             tls_cert_file = \"{}\"\ntls_key_file = \"{}\"\n{server_extra}",
            file("server.pem"),
            file("server.key")
        );
        let proxy = Proxy::start_with_server(&[&upstream.addr], &server, extra);
        Self {
            upstream,
            proxy,
            tls_port,
            _dir: dir,
        }
    }

    /// The port of `mode` (`tls` or `h2c`).
    pub(crate) fn port(&self, mode: &str) -> u16 {
        match mode {
            "tls" => self.tls_port,
            _ => self.proxy.port,
        }
    }

    /// The fingerprint the backend was told for the last request, if any.
    fn told(&self) -> Option<String> {
        let told = self.upstream.last_header("x-h2fp");
        assert!(told.len() <= 1, "one x-h2fp header at most: {told:?}");
        told.into_iter().next()
    }

    /// The `h2fp=` of the access-log line of `path`, if it has one.
    fn logged(&self, path: &str) -> Option<String> {
        let request = format!("GET {path} status=");
        let log = self.proxy.log_when(|log| log.contains(&request));
        let line = log.lines().find(|l| l.contains(&request))?;
        let at = line.find(" h2fp=")?;
        Some(line[at + 6..].split(' ').next()?.to_owned())
    }
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/proxy/h2fp")
        .join(name)
}

/// What the chosen-frames client was answered, and the reference fingerprint of its bytes.
fn client(mode: &str, port: u16, path: &str, frames: [&str; 4]) -> (String, String) {
    let out = Command::new(python())
        .arg(script("client.py"))
        .args([mode, &port.to_string(), path])
        .args(frames)
        .output()
        .expect("python runs");
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "client.py: {printed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines = printed.lines().map(str::to_owned);
    (lines.next().unwrap(), lines.next().unwrap())
}

/// The reference fingerprint of `bytes`, a client's first bytes.
fn reference(bytes: &[u8]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let mut child = Command::new(python())
        .arg(script("reference.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(hex.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// What `probe.py` printed, run against `port` over `mode` (`tls` or `h2c`) with `args`.
pub(crate) fn probe(mode: &str, port: u16, args: &[&str]) -> String {
    let out = Command::new(python())
        .arg(script("probe.py"))
        .args([mode, &port.to_string()])
        .args(args)
        .output()
        .expect("python runs");
    let printed = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(
        out.status.success(),
        "probe.py {mode} {args:?}: {printed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    printed
}

/// curl's status and HTTP version for `url`, with `args` first.
fn curl(args: &[&str], url: &str) -> String {
    let out = Command::new("curl")
        .args([
            "-sk",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code} %{http_version}",
        ])
        .args(["--max-time", "10"])
        .args(args)
        .arg(url)
        .output()
        .expect("curl runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Chrome's published frames, old Firefox's (PRIORITY frames), and a client sending no
/// WINDOW_UPDATE and no SETTINGS entries: each with the fingerprint it must give.
const CHOSEN: [([&str; 4], &str); 3] = [
    (
        ["1:65536;2:0;4:6291456;6:262144", "15663105", "-", "m,a,s,p"],
        "1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p",
    ),
    (
        [
            "1:65536;4:131072;5:16384",
            "12517377",
            "3:0:0:201,5:0:0:101,7:0:0:1,9:0:7:1,11:0:3:1,13:0:0:241",
            "m,p,a,s",
        ],
        "1:65536;4:131072;5:16384|12517377|3:0:0:201,5:0:0:101,7:0:0:1,9:0:7:1,11:0:3:1,\
         13:0:0:241|m,p,a,s",
    ),
    (["-", "00", "-", "m,s,p,a"], "|00|0|m,s,p,a"),
];

#[test]
fn chosen_frames_over_tls_and_h2c_give_what_the_reference_reads() {
    let h2 = H2Proxy::start("h2fp_header = \"x-h2fp\"");
    for mode in ["tls", "h2c"] {
        for (i, (frames, expected)) in CHOSEN.iter().enumerate() {
            let path = format!("/{mode}/{i}");
            let (status, read) = client(mode, h2.port(mode), &path, *frames);
            assert_eq!(status, "200", "{mode} {expected}");
            assert_eq!(read, *expected, "the reference reads what was chosen");
            assert_eq!(h2.told().as_deref(), Some(*expected), "{mode}");
            assert_eq!(h2.logged(&path).as_deref(), Some(*expected), "{mode}");
        }
    }
}

#[test]
fn curl_over_h2c_and_tls_is_fingerprinted_and_http1_is_not() {
    let h2 = H2Proxy::start("h2fp_header = \"x-h2fp\"");
    let tap = Tap::start(h2.proxy.port);
    let via_tap = format!("http://127.0.0.1:{}/curl-h2c", tap.port);
    assert_eq!(curl(&["--http2-prior-knowledge"], &via_tap), "200 2");
    let curl_h2c = h2.told().expect("a fingerprint for curl over h2c");
    assert_eq!(curl_h2c, reference(&tap.firsts().remove(0)));
    assert_eq!(h2.logged("/curl-h2c"), Some(curl_h2c.clone()));

    let tls = format!("https://127.0.0.1:{}/curl-tls", h2.tls_port);
    assert_eq!(curl(&["--http2"], &tls), "200 2");
    assert_eq!(
        h2.told(),
        Some(curl_h2c.clone()),
        "one curl, one HTTP/2 stack"
    );

    for (args, url) in [
        (&["--http1.1"][..], tls.replace("curl-tls", "h1-tls")),
        (&[][..], h2.proxy.url("/h1")),
    ] {
        assert_eq!(curl(args, &url), "200 1.1", "{url}");
        assert_eq!(h2.told(), None, "no fingerprint over HTTP/1: {url}");
        // A client's own header of that name is not passed on.
        let mut with_own = args.to_vec();
        with_own.extend(["-H", "x-h2fp: 1:1|00|0|m"]);
        assert_eq!(curl(&with_own, &url), "200 1.1");
        assert_eq!(h2.told(), None, "{url}");
    }
    assert_eq!(h2.logged("/h1"), None, "no h2fp= for HTTP/1");
}

#[test]
fn hundreds_of_settings_entries_and_priority_frames_are_served_and_capped() {
    let h2 = H2Proxy::start("h2fp_header = \"x-h2fp\"");
    for mode in ["tls", "h2c"] {
        let frames = ["many:500", "00", "many:300", "m,a,s,p"];
        let (status, read) = client(mode, h2.port(mode), "/many", frames);
        assert_eq!(status, "200", "{mode}");
        let parts: Vec<&str> = read.split('|').collect();
        let first = |part: &str, sep: char, n: usize| {
            part.split(sep)
                .take(n)
                .collect::<Vec<_>>()
                .join(&sep.to_string())
        };
        let capped = format!(
            "{}|00|{}|m,a,s,p",
            first(parts[0], ';', 12),
            first(parts[2], ',', 8)
        );
        assert_eq!(h2.told(), Some(capped), "{mode}");
    }
}

#[test]
fn match_h2fp_denies_the_source_h2fp_buckets_and_a_reload_turns_reading_on() {
    let h2 = H2Proxy::start("");
    let (chrome, firefox) = (CHOSEN[0], CHOSEN[1]);
    let port = h2.proxy.port;
    let (status, _) = client("h2c", port, "/before", chrome.0);
    assert_eq!(status, "200");
    assert_eq!(h2.logged("/before"), None, "nothing asks: nothing read");

    let policies = format!(
        "\n[[policy]]\nname = \"old-firefox\"\naction = \"deny\"\n\
         match = {{ h2fp = [\"{}\"] }}\n\n\
         [[policy]]\nname = \"per-stack\"\ncapacity = 2\nrate = \"1/h\"\nsources = [\"h2fp\"]\n\
         unless = {{ h2fp = [\"{}\"] }}\n",
        firefox.1, CHOSEN[2].1
    );
    h2.proxy
        .rewrite_config(|config| config.to_owned() + &policies);
    h2.proxy.reload("success");
    for i in 0..2 {
        let (status, _) = client("h2c", port, &format!("/chrome/{i}"), chrome.0);
        assert_eq!(status, "200", "request {i}");
    }
    let (status, _) = client("tls", h2.tls_port, "/chrome/2", chrome.0);
    assert_eq!(status, "429", "one HTTP/2 stack, one bucket, over TLS too");
    assert_eq!(client("h2c", port, "/firefox", firefox.0).0, "403");
    for i in 0..3 {
        let exempt = client("h2c", port, &format!("/bare/{i}"), CHOSEN[2].0);
        assert_eq!(exempt.0, "200", "unless.h2fp exempts");
    }
    assert_eq!(h2.logged("/chrome/0").as_deref(), Some(chrome.1));
    assert!(h2
        .proxy
        .log_when(|log| log.contains("policy=old-firefox"))
        .contains("policy=old-firefox"));

    let out = Command::new(common::floodgate_bin())
        .args([
            "--config",
            &h2.proxy.config_path.display().to_string(),
            "--test",
        ])
        .output()
        .unwrap();
    let described = String::from_utf8_lossy(&out.stdout);
    assert!(
        described.contains("HTTP/2 fingerprint of h2 and h2c connections"),
        "{described}"
    );
    assert!(
        described.contains(&format!("h2fp {}", firefox.1)),
        "{described}"
    );
}

#[test]
fn a_backend_header_that_is_https_own_is_refused_where_it_stands() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.toml");
    let text = "[server]\nlisten = \"127.0.0.1:1\"\n\n[upstream]\nbackends = [\"127.0.0.1:2\"]\n\
                h2fp_header = \"content-length\"\n";
    std::fs::write(&path, text).unwrap();
    let out = Command::new(common::floodgate_bin())
        .args(["--config", &path.display().to_string(), "--test"])
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success());
    assert!(
        said.contains("f.toml:6:15: `upstream.h2fp_header`: `content-length` has another use"),
        "{said}"
    );
}

mod probes;
