//! The access log: one line per request, when `server.access_log` is on (or a format or file
//! is given). Floodgate's own format names the caller by the first twelve hex digits of its
//! identity digest, never in the clear; `combined` is nginx's, so CrowdSec's stock
//! `crowdsecurity/nginx-logs` parser and its scenarios read Floodgate's traffic unchanged.
//! Lines go to `server.access_log_file` (opened again on every reload, for logrotate) or to
//! stderr, written by a thread of their own so no request waits on the disk.

mod combined;
mod refused;
mod sink;

use combined::{combined_line, CombinedEntry};

use super::record::Record;
use super::{RefusedHead, RequestState};
use crate::clock::Clock;
use pingora::proxy::Session;
use sink::Sink;
use std::fmt::Write;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::{Instant, SystemTime};

/// How access-log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// Floodgate's: decision, policy, caller digest, request id, time taken.
    #[default]
    Floodgate,
    /// nginx's `combined` (what CrowdSec's nginx parser reads).
    Combined,
}

/// `server.access_log*`: the format and where lines go.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AccessLogSettings {
    /// The line format.
    pub format: LogFormat,
    /// The file lines are appended to; stderr when `None`.
    pub file: Option<PathBuf>,
}

/// An open access log.
pub struct AccessLog {
    format: LogFormat,
    sink: Option<Sink>,
    /// What the lines' times are read from.
    clock: Clock,
}

impl AccessLog {
    /// The log `settings` describe, its file opened (created if missing) for appending, its
    /// lines' times read from `clock`.
    pub fn open(settings: &AccessLogSettings, clock: Clock) -> std::io::Result<Self> {
        let sink = match (&settings.file, settings.format) {
            (Some(path), _) => Some(Sink::file(path)?),
            (None, LogFormat::Combined) => Some(Sink::stderr()?),
            // Floodgate's own lines to stderr go through the logger, with its prefix.
            (None, LogFormat::Floodgate) => None,
        };
        Ok(Self {
            format: settings.format,
            sink,
            clock,
        })
    }

    /// Writes the line of the request `session` served with status `written`, that started
    /// at `started`.
    pub(super) fn write(
        &self,
        session: &Session,
        ctx: &RequestState,
        written: Option<u16>,
        started: Instant,
    ) {
        let line = match self.format {
            LogFormat::Floodgate => floodgate_line(session, ctx, written, started),
            LogFormat::Combined => combined(session, ctx, written, self.clock.now()),
        };
        self.send(line);
    }

    /// Writes the line of a request head answered before it was whole (`refused`), from the
    /// TCP peer `peer`.
    pub fn write_refused(&self, refused: &RefusedHead, peer: Option<IpAddr>) {
        let line = match self.format {
            LogFormat::Floodgate => refused::floodgate_refused(refused),
            LogFormat::Combined => refused::combined_refused(refused, peer, self.clock.now()),
        };
        self.send(line);
    }

    /// Whether every line written so far has reached the file (or stderr): what a shutdown
    /// waits for before the process ends.
    pub fn is_written(&self) -> bool {
        self.sink.as_ref().is_none_or(Sink::is_written)
    }

    fn send(&self, line: String) {
        match &self.sink {
            Some(sink) => sink.send(line),
            None => log::info!(target: "floodgate::access", "{line}"),
        }
    }
}

/// Floodgate's own line (with a timestamp when it goes to a file), written into one
/// buffer from the request's record.
fn floodgate_line(
    session: &Session,
    ctx: &RequestState,
    written: Option<u16>,
    started: Instant,
) -> String {
    let req = session.req_header();
    let record = &ctx.record;
    let mut line = String::with_capacity(224);
    // Writing to a String cannot fail.
    let _ = write!(
        line,
        "{} {} status={} decision={} policy={} identity=",
        req.method,
        req.uri.path(),
        written.unwrap_or(0),
        record.decision_word(),
        record.policy().map_or("-", |p| &**p),
    );
    match record.caller() {
        Some(caller) => {
            for byte in &caller.identity.prefix_u64().to_le_bytes()[..6] {
                let _ = write!(line, "{byte:02x}");
            }
        }
        None => line.push('-'),
    }
    let _ = write!(
        line,
        " id={} ms={:.3}",
        ctx.front.id(),
        started.elapsed().as_secs_f64() * 1000.0
    );
    let _ = facts(&mut line, record);
    line
}

/// The record's facts the line shows, each ` key=value` when known.
fn facts(line: &mut String, record: &Record) -> std::fmt::Result {
    let traits = record.traits();
    if let Some(reason) = record.blocked_by() {
        write!(line, " ban={reason}")?;
    }
    if let Some(claim) = &traits.bot {
        write!(line, " bot={} crawler={}", claim.category(), claim.name)?;
    }
    if let Some(pass) = record.pass() {
        write!(line, " pass={}", pass.hex())?;
    }
    if let Some(via) = record.via() {
        write!(line, " via={}", via.word())?;
    }
    if let Some(state) = record.proof() {
        write!(line, " proof={state}")?;
    }
    if let Some(fact) = &traits.robots {
        write!(line, " robots={}", fact.verdict)?;
    }
    if let Some(ja4) = &traits.ja4 {
        write!(line, " ja4={ja4}")?;
    }
    match (&traits.h2fp, traits.h2fp_declined) {
        (Some(h2fp), _) => write!(line, " h2fp={h2fp}")?,
        (None, Some(declined)) => write!(line, " h2fp_declined={declined}")?,
        (None, None) => {}
    }
    if let Some(score) = &traits.score {
        write!(line, " score={} signals={}", score.value, score.signals)?;
    }
    Ok(())
}

/// nginx's `combined` line, the client as Floodgate resolved it (behind trusted proxies),
/// written at `at`.
fn combined(session: &Session, ctx: &RequestState, written: Option<u16>, at: SystemTime) -> String {
    let req = session.req_header();
    let client = ctx.front.client.ip;
    let header = |name: http::HeaderName| req.headers.get(name).map(|v| v.as_bytes());
    let target = req.uri.path_and_query().map_or("/", |p| p.as_str());
    combined_line(&CombinedEntry {
        client,
        at,
        method: req.method.as_str(),
        target: target.as_bytes(),
        version: req.version,
        status: written.unwrap_or(0),
        body_bytes: session.body_bytes_sent(),
        referer: header(http::header::REFERER),
        user_agent: header(http::header::USER_AGENT),
    })
}
