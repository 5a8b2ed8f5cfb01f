//! A real browser for the tests: one headless Chromium per `Plan`, driven by Selenium
//! (`tests/browser/drive.py`, run by the pytools venv's python) through navigations and waits,
//! and actions on the page (type, click, wait for an element, read it, screenshots, window
//! sizes), answering with what it saw: final URLs, titles, text, statuses, timings, values
//! read, cookies, the console's errors and the URL of every request made.
//! `scripts/deps.sh`'s `need_browser` installs Chromium, its driver and Selenium first.

use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// What one Chromium does, in order: cookies set first, then each navigation and its wait.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    steps: Vec<Step>,
    set_cookies: Vec<Cookie>,
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "as_map")]
    headers: Vec<(String, String)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_agent: Option<String>,
    javascript: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    insecure_certs: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    net_log: Option<String>,
    timeout_s: u64,
}

/// A navigation, or an action on the page as it stands.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
enum Step {
    Visit(Visit),
    Act(Box<Action>),
}

/// One action (exactly one of its verbs set); selectors are CSS.
#[derive(Debug, Clone, Default, Serialize)]
struct Action {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    type_text: Option<(String, String)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    clear: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    click: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    wait_for: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    wait_gone: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    read: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    read_all: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attr: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    screenshot: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    window: Option<(u32, u32)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pause_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    script: Option<String>,
    timeout_s: f64,
}

/// One navigation and what to wait for after it.
#[derive(Debug, Clone, Serialize)]
struct Visit {
    url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    until_url_prefix: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    until_text: Option<String>,
    timeout_s: f64,
}

/// What a navigation waits for by default, at most.
const STEP_TIMEOUT: Duration = Duration::from_secs(30);
/// The whole run's limit by default (Chromium's start included).
const RUN_TIMEOUT: Duration = Duration::from_secs(120);
/// How long past the run's limit the script gets to quit Chromium before it is killed.
const GRACE: Duration = Duration::from_secs(15);

impl Default for Plan {
    fn default() -> Self {
        Self::new()
    }
}

impl Plan {
    /// An empty plan: no steps, no cookies, JavaScript on, a 120 s limit.
    pub fn new() -> Self {
        Self {
            steps: Vec::new(),
            set_cookies: Vec::new(),
            headers: Vec::new(),
            user_agent: None,
            javascript: true,
            insecure_certs: false,
            net_log: None,
            timeout_s: RUN_TIMEOUT.as_secs(),
        }
    }

    /// Adds a navigation to `url`; without a wait, the step ends when the page has loaded.
    pub fn visit(mut self, url: impl Into<String>) -> Self {
        self.steps.push(Step::Visit(Visit {
            url: url.into(),
            until_url_prefix: None,
            until_text: None,
            timeout_s: STEP_TIMEOUT.as_secs_f64(),
        }));
        self
    }

    fn act(mut self, action: Action) -> Self {
        self.steps.push(Step::Act(Box::new(Action {
            timeout_s: STEP_TIMEOUT.as_secs_f64(),
            ..action
        })));
        self
    }

    /// Types `text` into the first visible element matching `selector` (waiting for it).
    pub fn type_text(self, selector: &str, text: &str) -> Self {
        self.act(Action {
            type_text: Some((selector.into(), text.into())),
            ..Action::default()
        })
    }

    /// Empties the first visible field matching `selector`.
    pub fn clear(self, selector: &str) -> Self {
        self.act(Action {
            clear: Some(selector.into()),
            ..Action::default()
        })
    }

    /// Clicks the first visible element matching `selector` (waiting for it).
    pub fn click(self, selector: &str) -> Self {
        self.act(Action {
            click: Some(selector.into()),
            ..Action::default()
        })
    }

    /// Waits until an element matching `selector` is visible.
    pub fn wait_for(self, selector: &str) -> Self {
        self.act(Action {
            wait_for: Some(selector.into()),
            ..Action::default()
        })
    }

    /// Waits until an element matching `selector` is visible and its text contains `text`.
    pub fn wait_for_text(self, selector: &str, text: &str) -> Self {
        self.act(Action {
            wait_for: Some(selector.into()),
            text: Some(text.into()),
            ..Action::default()
        })
    }

    /// Waits until no element matching `selector` is visible.
    pub fn wait_gone(self, selector: &str) -> Self {
        self.act(Action {
            wait_gone: Some(selector.into()),
            ..Action::default()
        })
    }

    /// Reads the text of the first visible element matching `selector` (its step's `value`).
    pub fn read(self, selector: &str) -> Self {
        self.act(Action {
            read: Some(selector.into()),
            ..Action::default()
        })
    }

    /// Reads attribute `attr` of every element matching `selector` (its step's `values`).
    pub fn read_all(self, selector: &str, attr: &str) -> Self {
        self.act(Action {
            read_all: Some(selector.into()),
            attr: Some(attr.into()),
            ..Action::default()
        })
    }

    /// Saves a PNG of the window to `path`.
    pub fn screenshot(self, path: impl AsRef<Path>) -> Self {
        self.act(Action {
            screenshot: Some(path.as_ref().display().to_string()),
            ..Action::default()
        })
    }

    /// Resizes the window to `width` × `height` CSS pixels.
    pub fn window(self, width: u32, height: u32) -> Self {
        self.act(Action {
            window: Some((width, height)),
            ..Action::default()
        })
    }

    /// Runs `js` in the page asynchronously: its last argument is the callback, whose
    /// argument (as JSON) is the step's `value`. For what another client does meanwhile.
    pub fn script(self, js: &str) -> Self {
        self.act(Action {
            script: Some(js.into()),
            ..Action::default()
        })
    }

    /// Lets the page run for `time`.
    pub fn pause(self, time: Duration) -> Self {
        self.act(Action {
            pause_s: Some(time.as_secs_f64()),
            ..Action::default()
        })
    }

    /// The last navigation waits until the browser's URL starts with `prefix`.
    pub fn until_url_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.last_step().until_url_prefix = Some(prefix.into());
        self
    }

    /// The last navigation waits until the page's visible text contains `text`.
    pub fn until_text(mut self, text: impl Into<String>) -> Self {
        self.last_step().until_text = Some(text.into());
        self
    }

    /// The last step's wait gives up (`timed_out`) after `limit` (default 30 s).
    pub fn step_timeout(mut self, limit: Duration) -> Self {
        match self.steps.last_mut() {
            Some(Step::Visit(visit)) => visit.timeout_s = limit.as_secs_f64(),
            Some(Step::Act(action)) => action.timeout_s = limit.as_secs_f64(),
            None => panic!("a timeout follows a step"),
        }
        self
    }

    /// Sets `cookie` in the browser before the first navigation.
    pub fn cookie(mut self, cookie: Cookie) -> Self {
        self.set_cookies.push(cookie);
        self
    }

    /// Sends `name: value` with every request the browser makes.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Replaces Chromium's User-Agent (which names `HeadlessChrome`).
    pub fn user_agent(mut self, agent: impl Into<String>) -> Self {
        self.user_agent = Some(agent.into());
        self
    }

    /// Turns JavaScript on or off (on by default).
    pub fn javascript(mut self, on: bool) -> Self {
        self.javascript = on;
        self
    }

    /// Has Chromium write its net log (what it sent, HTTP/2 frames included) to `path`.
    pub fn net_log(mut self, path: impl AsRef<Path>) -> Self {
        self.net_log = Some(path.as_ref().display().to_string());
        self
    }

    /// Accepts any server certificate (a test's self-made one), as `acceptInsecureCerts`.
    pub fn insecure_certs(mut self) -> Self {
        self.insecure_certs = true;
        self
    }

    /// The whole run's limit (default 120 s): past it the run panics, Chromium quit.
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout_s = limit.as_secs().max(1);
        self
    }

    /// Runs the plan in a fresh headless Chromium; see [`run`].
    pub fn run(&self) -> Report {
        run(self)
    }

    fn last_step(&mut self) -> &mut Visit {
        match self.steps.last_mut() {
            Some(Step::Visit(visit)) => visit,
            _ => panic!("a wait follows a visit: call Plan::visit first"),
        }
    }
}

fn as_map<S: serde::Serializer>(pairs: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

/// A browser cookie, as reported and as set (`Plan::cookie`): a `domain` with a leading dot
/// is a domain cookie, else a host-only one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cookie {
    pub name: String,
    pub value: String,
    pub domain: String,
    pub path: String,
    #[serde(rename = "httpOnly")]
    pub http_only: bool,
    pub secure: bool,
    /// `Strict`, `Lax` or `None`; absent when the server set none.
    #[serde(rename = "sameSite")]
    pub same_site: Option<String>,
    /// Seconds since the epoch; absent for a session cookie.
    pub expiry: Option<u64>,
}

impl Cookie {
    /// A host-only session cookie for `domain` (e.g. `127.0.0.1`) on path `/`.
    pub fn new(name: &str, value: &str, domain: &str) -> Self {
        Self {
            name: name.into(),
            value: value.into(),
            domain: domain.into(),
            path: "/".into(),
            http_only: false,
            secure: false,
            same_site: None,
            expiry: None,
        }
    }
}

/// What the browser saw: one report per step, then every cookie it holds.
#[derive(Debug, Clone, Deserialize)]
pub struct Report {
    pub steps: Vec<StepReport>,
    pub cookies: Vec<Cookie>,
    /// The browser console's errors (level SEVERE), in order.
    #[serde(default)]
    pub console: Vec<ConsoleEntry>,
    /// The URL of every request the browser made, in order.
    #[serde(default)]
    pub requests: Vec<String>,
}

/// A message of the browser's console.
#[derive(Debug, Clone, Deserialize)]
pub struct ConsoleEntry {
    pub level: String,
    /// `javascript`, `console-api`, `network`, `security`…
    pub source: String,
    pub message: String,
}

impl Report {
    /// The cookie named `name`, if the browser holds one.
    pub fn cookie(&self, name: &str) -> Option<&Cookie> {
        self.cookies.iter().find(|c| c.name == name)
    }
}

/// One navigation's outcome.
#[derive(Debug, Clone, Deserialize)]
pub struct StepReport {
    /// The URL the browser showed when the wait ended.
    pub url: String,
    /// The document's `<title>`.
    pub title: String,
    /// The page's visible text, its first 4 KB.
    pub text: String,
    /// The HTTP status of the last document received for `url`, if one was seen.
    pub status: Option<u16>,
    /// Milliseconds from the navigation's start until the wait was met (or gave up).
    pub millis: u64,
    /// The wait was not met in time; the rest tells what the browser showed then.
    pub timed_out: bool,
    /// Every document the step received (redirects' targets, challenge pages…), in order.
    pub documents: Vec<Document>,
    /// The step did what it says (an action found its element; a wait was met).
    #[serde(default)]
    pub ok: bool,
    /// What a `read` read.
    #[serde(default)]
    pub value: Option<String>,
    /// What a `read_all` read.
    #[serde(default)]
    pub values: Option<Vec<Option<String>>>,
}

/// A document response the browser received.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Document {
    pub url: String,
    pub status: u16,
}

/// Runs `plan` in a fresh headless Chromium and parses its report; panics, with the
/// script's stderr, when the run fails or outlasts the plan's limit.
pub fn run(plan: &Plan) -> Report {
    let input = serde_json::to_vec(plan).expect("a plan serializes");
    let limit = Duration::from_secs(plan.timeout_s) + GRACE;
    let (status, stdout, stderr) = drive(&input, limit);
    assert!(status, "the browser run failed:\n{}", tail(&stderr, 60));
    serde_json::from_slice(&stdout).unwrap_or_else(|e| {
        panic!(
            "the browser's report does not parse ({e}):\n{}\n{}",
            String::from_utf8_lossy(&stdout),
            tail(&stderr, 60)
        )
    })
}

/// Runs drive.py with `input` on stdin, in a process group of its own (killed whole past
/// `limit`): whether it succeeded, its stdout and stderr.
fn drive(input: &[u8], limit: Duration) -> (bool, Vec<u8>, String) {
    // Chromium takes a core: never beside a test that times something.
    let _beside = super::serial::beside();
    let mut child = Command::new(python())
        .arg(script())
        .env("SE_OFFLINE", "true")
        // ChromeDriver's port, from the tests' own range (selenium would take an ephemeral
        // one, which another test's outgoing connection may hold by the time it binds).
        .env("FLOODGATE_DRIVER_PORT", super::free_port().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("the browser script starts");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input).expect("the plan is written");
    drop(stdin);
    let stdout = reader(child.stdout.take().expect("stdout"));
    let stderr = reader(child.stderr.take().expect("stderr"));
    let succeeded = wait_or_kill(&mut child, limit);
    let stdout = stdout.join().expect("stdout read");
    let stderr = String::from_utf8_lossy(&stderr.join().expect("stderr read")).into_owned();
    (succeeded, stdout, stderr)
}

fn reader(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = pipe.read_to_end(&mut out);
        out
    })
}

/// Waits for `child` up to `limit`; past it, kills its process group (Chromium with it).
fn wait_or_kill(child: &mut Child, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return status.success();
        }
        if Instant::now() >= deadline {
            let group = format!("-{}", child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = child.wait();
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The last `lines` lines of `text`.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// tests/browser/drive.py.
fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/drive.py")
}

/// The pytools venv's python, with Chromium, chromedriver and Selenium installed: made
/// once per test binary by `need_browser`.
fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let out = Command::new("bash")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args([
                "-c",
                ". scripts/deps.sh && need_browser && echo \"$PYTOOLS_PYTHON\"",
            ])
            .output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "need_browser failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
    })
}
