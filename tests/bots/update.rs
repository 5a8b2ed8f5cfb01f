//! `floodgate bots update DIR --catalogue FILE`, the real binary against a real HTTP server on
//! loopback: good ranges files are written (one download per URL, one file per crawler), a
//! garbage answer and a 404 keep the old files and make the exit status 1, a bad catalogue
//! file is refused with its location.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

const GOOD: &str = r#"{"creationTime":"2026-11-27T00:00:00.000000","prefixes":[{"ipv4Prefix":"127.0.0.0/24"},{"ipv4Prefix":"192.0.2.0/24"},{"ipv6Prefix":"2001:db8::/32"}]}"#;

/// An HTTP/1.1 server answering one request per connection from a fixed table of paths
/// (404 for the rest), counting the requests per path. Stopped when dropped.
struct Files {
    addr: String,
    hits: Arc<Mutex<HashMap<String, usize>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Files {
    fn serve(table: &[(&str, &str)]) -> Files {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("address").to_string();
        let table: HashMap<String, String> = table
            .iter()
            .map(|(path, body)| (path.to_string(), body.to_string()))
            .collect();
        let hits = Arc::new(Mutex::new(HashMap::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (counted, stopped) = (hits.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(stream) = stream {
                    answer(stream, &table, &counted);
                }
            }
        });
        Files {
            addr,
            hits,
            stop,
            thread: Some(thread),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }
}

fn answer(
    mut stream: TcpStream,
    table: &HashMap<String, String>,
    hits: &Mutex<HashMap<String, usize>>,
) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
    *hits.lock().unwrap().entry(path.clone()).or_default() += 1;
    let (status, body) = match table.get(&path) {
        Some(body) => ("200 OK", body.as_str()),
        None => ("404 Not Found", "not here"),
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(reply.as_bytes());
}

impl Drop for Files {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(&self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn entry(name: &str, url: Option<&str>) -> String {
    let url = url.map_or(String::new(), |u| format!("ranges_url = \"{u}\"\n"));
    format!("\n[[crawler]]\nname = \"{name}\"\ncategory = \"ai-crawler\"\nuser_agent = \"{name}\"\n{url}")
}

fn update(dir: &Path, catalogue: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_floodgate"))
        .args(["bots", "update"])
        .arg(dir)
        .arg("--catalogue")
        .arg(catalogue)
        .args(["--ja4-mapping", "none"])
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn good_files_are_written_and_failures_keep_the_old_files() {
    let files = Files::serve(&[("/good.json", GOOD), ("/garbage.json", "<html>oops</html>")]);
    let work = tempfile::tempdir().expect("temp dir");
    let catalogue = work.path().join("catalogue.toml");
    let mut text_of = "updated = \"2026-11-27\"\nsources = [\"test\"]\n".to_owned();
    text_of += &entry("GoodBot", Some(&files.url("/good.json")));
    text_of += &entry("Good-Too", Some(&files.url("/good.json")));
    text_of += &entry("GarbageBot", Some(&files.url("/garbage.json")));
    text_of += &entry("MissingBot", Some(&files.url("/missing.json")));
    text_of += &entry("NoRanges", None);
    std::fs::write(&catalogue, text_of).unwrap();
    let dir = work.path().join("state/ranges");

    // A fresh directory: made, the good files written, the others not.
    let first = update(&dir, &catalogue);
    assert_eq!(first.status.code(), Some(1), "{}", text(&first.stderr));
    for name in ["goodbot.json", "good-too.json"] {
        let path = dir.join(name);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), GOOD);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644, "{name}");
    }
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["good-too.json", "goodbot.json"],
        "no temporary files, no bad ones"
    );
    assert_eq!(files.hits("/good.json"), 1, "one download per URL");

    let stdout = text(&first.stdout);
    assert!(stdout.contains("goodbot.json: 3 prefixes, "), "{stdout}");
    assert!(
        stdout.contains(&format!("{} bytes (GoodBot)", GOOD.len())),
        "{stdout}"
    );
    assert!(stdout.contains("2 of 4 ranges files written"), "{stdout}");
    let stderr = text(&first.stderr);
    assert!(
        stderr.contains("garbagebot.json: kept the old file (GarbageBot): not a ranges file"),
        "{stderr}"
    );
    assert!(
        stderr.contains("missingbot.json: kept the old file (MissingBot): the server answered 404"),
        "{stderr}"
    );

    // Old files in place: the failures leave them as they were.
    std::fs::write(dir.join("garbagebot.json"), "old garbage ranges").unwrap();
    std::fs::write(dir.join("missingbot.json"), "old missing ranges").unwrap();
    let second = update(&dir, &catalogue);
    assert_eq!(second.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(dir.join("garbagebot.json")).unwrap(),
        "old garbage ranges"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("missingbot.json")).unwrap(),
        "old missing ranges"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("goodbot.json")).unwrap(),
        GOOD
    );
    assert_eq!(files.hits("/garbage.json"), 2);
}

#[test]
fn every_file_written_is_success() {
    let files = Files::serve(&[("/good.json", GOOD)]);
    let work = tempfile::tempdir().expect("temp dir");
    let catalogue = work.path().join("catalogue.toml");
    let text_of =
        "updated = \"2026-11-27\"\n".to_owned() + &entry("GoodBot", Some(&files.url("/good.json")));
    std::fs::write(&catalogue, text_of).unwrap();
    let run = update(work.path(), &catalogue);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(text(&run.stdout).contains("1 of 1 ranges files written"));
}

#[test]
fn a_file_past_8_mib_is_refused() {
    let huge = " ".repeat(8 << 20) + GOOD;
    let files = Files::serve(&[("/huge.json", &huge)]);
    let work = tempfile::tempdir().expect("temp dir");
    let catalogue = work.path().join("catalogue.toml");
    let text_of =
        "updated = \"2026-11-27\"\n".to_owned() + &entry("HugeBot", Some(&files.url("/huge.json")));
    std::fs::write(&catalogue, text_of).unwrap();
    let run = update(work.path(), &catalogue);
    assert_eq!(run.status.code(), Some(1));
    assert!(text(&run.stderr)
        .contains("hugebot.json: kept the old file (HugeBot): larger than 8388608 bytes"));
    assert!(!work.path().join("hugebot.json").exists());
}

#[test]
fn a_bad_catalogue_file_is_refused_where_it_is_wrong() {
    let work = tempfile::tempdir().expect("temp dir");
    let catalogue = work.path().join("catalogue.toml");
    let bad = "updated = \"2026-11-27\"\n[[crawler]]\nname = \"X\"\ncategory = \"ai-crawler\"\nuser_agent = \"X(\"\n";
    std::fs::write(&catalogue, bad).unwrap();
    let run = update(&work.path().join("ranges"), &catalogue);
    assert_eq!(run.status.code(), Some(2));
    let stderr = text(&run.stderr);
    let at = format!(
        "{}:5:14: `user_agent` is not a valid regex",
        catalogue.display()
    );
    assert!(stderr.starts_with(&at), "{stderr}");
    assert!(!work.path().join("ranges").exists(), "nothing was tried");
}

#[test]
fn browsers_ja4s_from_a_mapping_are_written_and_read_by_bots_ranges_dir() {
    let mapping = "Application,Library,Device,OS,ja4,ja4s,ja4h,ja4x,ja4t,ja4tscan,Notes\n\
                   Chromium Browser,,,,t13d1516h2_8daaf6152771_02713d6af862,,,,,,\n\
                   Firefox 150,,,,t13d1717h2_5b57614c22b0_bbbbbbbbbbbb,,,,,,\n\
                   ,Python,,,t13d181000_85036bcba153_d41ae481755e,,,,,,\n";
    let files = Files::serve(&[("/good.json", GOOD), ("/mapping.csv", mapping)]);
    let work = tempfile::tempdir().expect("temp dir");
    let catalogue = work.path().join("catalogue.toml");
    let text_of =
        "updated = \"2026-11-27\"\n".to_owned() + &entry("GoodBot", Some(&files.url("/good.json")));
    std::fs::write(&catalogue, text_of).unwrap();
    let dir = work.path().join("ranges");
    let run = Command::new(env!("CARGO_BIN_EXE_floodgate"))
        .args(["bots", "update"])
        .arg(&dir)
        .arg("--catalogue")
        .arg(&catalogue)
        .args(["--ja4-mapping", &files.url("/mapping.csv")])
        .output()
        .expect("the binary runs");
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        text(&run.stdout).contains("browsers.toml: the shipped lists and 1 JA4s"),
        "{}",
        text(&run.stdout)
    );
    let written = std::fs::read_to_string(dir.join("browsers.toml")).unwrap();
    assert!(
        written.contains("t13d1717h2_5b57614c22b0_bbbbbbbbbbbb"),
        "{written}"
    );
    // The config reads it from bots.ranges_dir; a broken one is refused at the key.
    let config = work.path().join("floodgate.toml");
    let config_text = format!(
        "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n\
         [bots]\nranges_dir = \"{}\"\n",
        dir.display()
    );
    std::fs::write(&config, config_text).unwrap();
    let check = || {
        Command::new(env!("CARGO_BIN_EXE_floodgate"))
            .arg("--config")
            .arg(&config)
            .arg("--test")
            .output()
            .expect("the binary runs")
    };
    assert!(check().status.success(), "{}", text(&check().stderr));
    std::fs::write(dir.join("browsers.toml"), "updated = 1").unwrap();
    let refused = check();
    assert!(!refused.status.success());
    let said = text(&refused.stderr);
    assert!(
        said.contains(&format!("{}:8:14: `bots.ranges_dir`", config.display())),
        "{said}"
    );
}

/// Issue 82: a `bots.ranges_dir` that is missing, or holds no crawler's ranges, was accepted
/// silently and verified nothing; `--test` and the start now warn where it stands, and a
/// directory `floodgate bots update` filled does not.
#[test]
fn a_ranges_dir_that_gives_no_ranges_is_warned_about_at_test_and_at_start() {
    let work = tempfile::tempdir().expect("temp dir");
    let config = work.path().join("floodgate.toml");
    let config_text =
        "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n\n\
                       [bots]\nranges_dir = \"ranges\"\n";
    std::fs::write(&config, config_text).unwrap();
    let said = || {
        let out = Command::new(env!("CARGO_BIN_EXE_floodgate"))
            .arg("--config")
            .arg(&config)
            .arg("--test")
            .output()
            .expect("the binary runs");
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stderr)
    };
    let dir = work.path().join("ranges");
    let at = format!(
        "{}:8:14: `bots.ranges_dir`: `{}`",
        config.display(),
        dir.display()
    );
    let missing = said();
    assert!(
        missing.contains(&format!("{at} is not a directory")),
        "{missing}"
    );
    assert!(missing.contains("floodgate bots update"), "{missing}");
    std::fs::create_dir(&dir).unwrap();
    let empty = said();
    assert!(
        empty.contains(&format!("{at} holds no crawler's ranges")),
        "{empty}"
    );
    std::fs::write(dir.join("googlebot.json"), GOOD).unwrap();
    let filled = said();
    assert!(!filled.contains("`bots.ranges_dir`"), "{filled}");
    // At start too, where the service's log shows it.
    let upstream = crate::common::Upstream::start();
    let missing = work.path().join("nowhere");
    let extra = format!("[bots]\nranges_dir = \"{}\"\n", missing.display());
    let proxy = crate::common::Proxy::start(&[&upstream.addr], &extra);
    let log = proxy.log();
    assert!(
        log.contains(&format!("`{}` is not a directory", missing.display())),
        "{log}"
    );
}
