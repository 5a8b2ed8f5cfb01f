//! robots.txt at the front: `/robots.txt` answered from Floodgate's copy before anything else
//! (never challenged, limited, shed, denied or banned; its reader noted for the trap), and the
//! trap's path never forwarded (a request for it that the gate lets through gets 404).

use super::record::Record;
use super::render::Handling;
use super::{RequestState, Snapshot};
use crate::identity::{Request, RobotsFact, Traits, Trapped};
use crate::robots::spring::{Spared, Sprung, Visitor};
use crate::telemetry::RequestDecision;
use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, USER_AGENT};
use http::Method;
use pingora::http::{RequestHeader, ResponseHeader};
use pingora::proxy::Session;

/// What Floodgate answered by itself, outside the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OwnAnswer {
    /// `/robots.txt`, from Floodgate's copy.
    RobotsTxt,
}

impl OwnAnswer {
    /// The request's decision.
    pub(super) fn decision(self) -> RequestDecision {
        match self {
            Self::RobotsTxt => RequestDecision::RobotsTxt,
        }
    }
}

/// The answer to a request for `/robots.txt` under `snapshot`, when `[robots]` is configured:
/// its copy for the request's host (HEAD: its length, no body); the reader is noted first.
pub(super) async fn robots_txt(
    snapshot: &Snapshot,
    session: &Session,
    ctx: &mut RequestState,
) -> Option<Handling> {
    let robots = snapshot.robots.as_deref()?;
    let req = session.req_header();
    if !robots.is_robots_txt(req.uri.path()) {
        return None;
    }
    if req.method != Method::GET && req.method != Method::HEAD {
        return None;
    }
    // Boxed: the fleet's call is a large future (about 6 KB), which every request's would carry.
    Box::pin(robots.read_by(ctx.front.client.ip)).await;
    ctx.record = Record::answered(OwnAnswer::RobotsTxt.decision());
    let host = crate::policy::request_host(&req.uri, req.headers.get(http::header::HOST));
    let body = robots.body(host.as_deref());
    let length = body.len();
    let body = match req.method == Method::HEAD {
        true => Bytes::new(),
        false => body,
    };
    Some(text(length, body))
}

/// A 200 of `text/plain` of `length` bytes, `body` (empty for HEAD).
fn text(length: usize, body: Bytes) -> Handling {
    let build = || -> pingora::Result<Box<ResponseHeader>> {
        let mut header = ResponseHeader::build(200, Some(3))?;
        header.insert_header(CONTENT_TYPE, "text/plain; charset=utf-8")?;
        header.insert_header(CONTENT_LENGTH, length)?;
        header.insert_header(CACHE_CONTROL, "max-age=300")?;
        Ok(Box::new(header))
    };
    match build() {
        Ok(header) => Handling::Answer(header, body),
        Err(e) => {
            log::error!("could not build the answer to /robots.txt: {e}");
            super::render::problem(500, Bytes::new(), &[])
        }
    }
}

/// The 404 a request for the trap gets when the gate lets it through: the path is linked
/// nowhere and is never forwarded.
pub(super) fn not_found() -> Handling {
    super::render::problem(404, Bytes::from_static(NOT_FOUND), &[])
}

const NOT_FOUND: &[u8] =
    br#"{"type":"about:blank","title":"Not Found","status":404,"detail":"Nothing is here."}"#;

/// What robots.txt says of the request `req` to `host` from the sender `traits` describes,
/// when `[robots]` is configured and it comes from a crawler (before the score, which reads
/// it).
pub(super) fn judge(
    snapshot: &Snapshot,
    req: &RequestHeader,
    host: Option<&str>,
    traits: &Traits,
) -> Option<RobotsFact> {
    let robots = snapshot.robots.as_deref()?;
    let user_agent = req.headers.get(USER_AGENT).map(|v| v.as_bytes());
    let target = req.uri.path_and_query().map_or("/", |pq| pq.as_str());
    robots.judge(host, user_agent, traits.bot.as_ref(), target)
}

/// The trap ban in force for the sender of `request`, and for a request for the trap that
/// caught no one, why it was spared.
pub(super) async fn trap(
    snapshot: &Snapshot,
    req: &RequestHeader,
    request: &Request<'_>,
) -> (Option<Trapped>, Option<Spared>) {
    let Some(robots) = snapshot.robots.as_deref() else {
        return (None, None);
    };
    let proven = request.proven_credential();
    let named = proven
        .as_ref()
        .map(|(source, identity)| (&**source, identity));
    if let Some(trapped) = robots.trapped(request.client_ip, named) {
        return (Some(trapped), None);
    }
    if !robots.is_trap(req.uri.path()) {
        return (None, None);
    }
    let visitor = Visitor {
        ip: request.client_ip,
        user_agent: req.headers.get(USER_AGENT).map(|v| v.as_bytes()),
        bot: request.traits().bot.as_ref(),
        proven,
    };
    // Boxed, as `read_by`: only a request for the trap pays for the fleet's large future.
    match Box::pin(robots.spring(visitor)).await {
        Sprung::Caught(trapped) => (Some(trapped), None),
        Sprung::Spared(spared) => (None, Some(spared)),
    }
}
