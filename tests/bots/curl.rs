//! Requests sent by the real curl: from a chosen loopback address (`--interface`), with a
//! chosen User-Agent (`-A`), timed.

use std::process::Command;
use std::time::{Duration, Instant};

/// One request to make.
pub struct Curl<'a> {
    url: &'a str,
    from: Option<String>,
    user_agent: Option<&'a str>,
}

impl<'a> Curl<'a> {
    /// A GET of `url`.
    pub fn get(url: &'a str) -> Self {
        Self {
            url,
            from: None,
            user_agent: None,
        }
    }

    /// Leaving from `address`.
    pub fn from(mut self, address: &str) -> Self {
        self.from = Some(address.to_owned());
        self
    }

    /// Sending `user_agent`.
    pub fn agent(mut self, user_agent: &'a str) -> Self {
        self.user_agent = Some(user_agent);
        self
    }
}

/// What came back.
pub struct Answer {
    pub status: u16,
    pub body: String,
    pub took: Duration,
}

/// Sends `request` with curl and reads the answer.
pub fn curl(request: &Curl<'_>) -> Answer {
    let mut command = Command::new("curl");
    command.args(["-s", "-m", "10", "-w", "\n%{http_code}"]);
    if let Some(from) = &request.from {
        command.args(["--interface", from]);
    }
    if let Some(agent) = request.user_agent {
        command.args(["-A", agent]);
    }
    let started = Instant::now();
    let out = command.arg(request.url).output().expect("curl runs");
    let took = started.elapsed();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, status) = text.rsplit_once('\n').unwrap_or(("", &text));
    Answer {
        status: status.trim().parse().unwrap_or(0),
        body: body.to_owned(),
        took,
    }
}
