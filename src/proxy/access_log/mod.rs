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

use super::{RefusedHead, RequestCtx};
use crate::clock::wall_now;
use pingora::proxy::Session;
use sink::Sink;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Instant;

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
}

impl AccessLog {
    /// The log `settings` describe, its file opened (created if missing) for appending.
    pub fn open(settings: &AccessLogSettings) -> std::io::Result<Self> {
        let sink = match (&settings.file, settings.format) {
            (Some(path), _) => Some(Sink::file(path)?),
            (None, LogFormat::Combined) => Some(Sink::stderr()?),
            // Floodgate's own lines to stderr go through the logger, with its prefix.
            (None, LogFormat::Floodgate) => None,
        };
        Ok(Self {
            format: settings.format,
            sink,
        })
    }

    /// Writes the line of the request `session` served with status `written`, that started
    /// at `started`.
    pub(super) fn write(
        &self,
        session: &Session,
        ctx: &RequestCtx,
        written: Option<u16>,
        started: Instant,
    ) {
        let line = match self.format {
            LogFormat::Floodgate => floodgate_line(session, ctx, written, started),
            LogFormat::Combined => combined(session, ctx, written),
        };
        self.send(line);
    }

    /// Writes the line of a request head answered before it was whole (`refused`), from the
    /// TCP peer `peer`.
    pub fn write_refused(&self, refused: &RefusedHead, peer: Option<IpAddr>) {
        let line = match self.format {
            LogFormat::Floodgate => refused::floodgate_refused(refused),
            LogFormat::Combined => refused::combined_refused(refused, peer, wall_now()),
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

/// Floodgate's own line (with a timestamp when it goes to a file).
fn floodgate_line(
    session: &Session,
    ctx: &RequestCtx,
    written: Option<u16>,
    started: Instant,
) -> String {
    let req = session.req_header();
    let identity = ctx
        .ticket
        .as_ref()
        .map(|t| t.identity.hex())
        .unwrap_or_default();
    let blocked = match &ctx.blocked_by {
        Some(reason) => format!(" ban={reason}"),
        None => String::new(),
    };
    let bot = match &ctx.bot {
        Some(claim) => format!(" bot={} crawler={}", claim.category(), claim.name),
        None => String::new(),
    };
    let pass = match &ctx.pass {
        Some(pass) => format!(" pass={}", pass.hex()),
        None => String::new(),
    };
    let ja4 = match &ctx.ja4 {
        Some(ja4) => format!(" ja4={ja4}"),
        None => String::new(),
    };
    let h2fp = match (&ctx.h2fp, ctx.h2fp_declined) {
        (Some(h2fp), _) => format!(" h2fp={h2fp}"),
        (None, Some(declined)) => format!(" h2fp_declined={declined}"),
        (None, None) => String::new(),
    };
    let score = match &ctx.score {
        Some(score) => format!(" score={} signals={}", score.value, score.signals),
        None => String::new(),
    };
    let proof = match ctx.proof {
        Some(state) => format!(" proof={state}"),
        None => String::new(),
    };
    let via = match ctx.earned {
        Some(_) => " via=privacy_pass",
        None => "",
    };
    let robots = match &ctx.robots {
        Some(fact) => format!(" robots={}", fact.verdict),
        None => String::new(),
    };
    let policy = ctx
        .ticket
        .as_ref()
        .map(|t| &t.policy)
        .or(ctx.ruled_by.as_ref());
    format!(
        "{} {} status={} decision={} policy={} identity={} id={} ms={:.3}{blocked}{bot}{pass}{via}{proof}{robots}{ja4}{h2fp}{score}",
        req.method,
        req.uri.path(),
        written.unwrap_or(0),
        decision(ctx),
        policy.map_or("-", |p| &**p),
        identity.get(..12).unwrap_or("-"),
        ctx.front.id(),
        started.elapsed().as_secs_f64() * 1000.0
    )
}

/// The `decision` word: the gate's, what a challenge solution came to, or what Floodgate
/// answered by itself.
pub(super) fn decision(ctx: &RequestCtx) -> &'static str {
    match (ctx.outcome, ctx.solved, ctx.own_answer) {
        // A Privacy Pass token solved the challenge the request would have met.
        (Some(outcome), _, _) if ctx.earned.is_some() && outcome.forwards() => "pass_issued",
        (Some(outcome), _, _) => outcome.label(),
        (None, Some(solved), _) => solved.label(),
        (None, None, Some(own)) => own.label(),
        (None, None, None) => "",
    }
}

/// nginx's `combined` line, the client as Floodgate resolved it (behind trusted proxies).
fn combined(session: &Session, ctx: &RequestCtx, written: Option<u16>) -> String {
    let req = session.req_header();
    let client = ctx.front.client.ip;
    let header = |name: http::HeaderName| req.headers.get(name).map(|v| v.as_bytes());
    let target = req.uri.path_and_query().map_or("/", |p| p.as_str());
    combined_line(&CombinedEntry {
        client,
        at: wall_now(),
        method: req.method.as_str(),
        target: target.as_bytes(),
        version: req.version,
        status: written.unwrap_or(0),
        body_bytes: session.body_bytes_sent(),
        referer: header(http::header::REFERER),
        user_agent: header(http::header::USER_AGENT),
    })
}
