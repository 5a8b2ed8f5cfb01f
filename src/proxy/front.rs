//! What the proxy, as the client's front, keeps of each request: its id, whether it came over
//! TLS, from a trusted proxy, as gRPC; and how answers the proxy writes itself are stamped.
//! The headers built from it live in `forwarding` (upstream) and `response` (downstream).

use super::edits::HeaderEdits;
use super::grpc;
use super::request_id;
use crate::explain::Reference;
use crate::gate::reply::{with_ref, PROBLEM_JSON};
use crate::identity::Client;
use bytes::Bytes;
use http::{HeaderName, HeaderValue, Version};
use pingora::http::{RequestHeader, ResponseHeader};
use pingora::protocols::http::HttpTask;
use pingora::proxy::Session;
use pingora::Result;

/// `[server]` keys about what the proxy adds to requests and responses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontSettings {
    /// The header that carries the request id (`server.request_id_header`).
    pub request_id_header: HeaderName,
    /// Whether to add `Via` to requests and responses (`server.via`).
    pub via: bool,
    /// Whether HTTP/1 header names keep their sender's case (`server.preserve_header_case`);
    /// otherwise they go lowercase, as in HTTP/2.
    pub preserve_header_case: bool,
}

impl Default for FrontSettings {
    fn default() -> Self {
        Self {
            request_id_header: HeaderName::from_static("x-request-id"),
            via: false,
            preserve_header_case: false,
        }
    }
}

/// One request as the front sees it.
#[derive(Debug, Default)]
pub(super) struct Front {
    /// The header the request id travels in, and the id; `None` until the head is read.
    pub(super) request_id: Option<(HeaderName, HeaderValue)>,
    /// The reference of the request id when Floodgate made it (`None`: a trusted proxy's,
    /// or none yet), so keeping its decision parses nothing.
    pub(super) own_id: Option<Reference>,
    /// The TCP peer, whether it is a trusted proxy (its forwarding headers are believed) and
    /// the client address behind it: resolved once, for every phase of the request.
    pub(super) client: Client,
    /// Whether the request came over TLS.
    pub(super) tls: bool,
    /// Whether the request is gRPC (`content-type: application/grpc…`).
    pub(super) grpc: bool,
    /// Whether the request carried `Authorization` (which keeps shared caches off its
    /// response unless it says otherwise).
    pub(super) authorized: bool,
    /// Whether to add `Via`.
    pub(super) via: bool,
}

impl Front {
    /// Whether the client's request came over HTTPS: to this listener's TLS, or to a trusted
    /// proxy that says so (`X-Forwarded-Proto: https`).
    pub(super) fn came_over_https(&self, req: &RequestHeader) -> bool {
        let forwarded = || {
            req.headers
                .get("x-forwarded-proto")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|proto| proto.trim().eq_ignore_ascii_case("https"))
        };
        self.tls || (self.client.trusted_peer && forwarded())
    }

    /// The front of the request in `session`, under `settings`, from `client`.
    pub(super) fn begin(settings: &FrontSettings, session: &Session, client: Client) -> Self {
        let req = session.req_header();
        let id = request_id::of(
            &req.headers,
            &settings.request_id_header,
            client.trusted_peer,
        );
        Self {
            request_id: Some((settings.request_id_header.clone(), id.value)),
            own_id: id.own,
            client,
            tls: session.digest().is_some_and(|d| d.ssl_digest.is_some()),
            grpc: grpc::is_grpc(req),
            authorized: req.headers.contains_key(http::header::AUTHORIZATION),
            via: settings.via,
        }
    }

    /// The request id, for the log.
    pub(super) fn id(&self) -> &str {
        self.request_id
            .as_ref()
            .and_then(|(_, v)| v.to_str().ok())
            .unwrap_or("-")
    }

    /// Adds the request id to an answer the proxy made itself.
    pub(super) fn stamp(&self, header: &mut ResponseHeader) -> Result<()> {
        if let Some((name, value)) = &self.request_id {
            header.insert_header(name.clone(), value.clone())?;
        }
        Ok(())
    }

    /// `header` and `body` with the request id as `ref` in the body, when it is a problem
    /// body (its length set again).
    fn refer(
        &self,
        mut header: Box<ResponseHeader>,
        body: Bytes,
    ) -> Result<(Box<ResponseHeader>, Bytes)> {
        let is_problem = header
            .headers
            .get(http::header::CONTENT_TYPE)
            .is_some_and(|t| t.as_bytes() == PROBLEM_JSON.as_bytes());
        match (&self.request_id, is_problem) {
            (Some((_, id)), true) => {
                let body = with_ref(&body, id.to_str().unwrap_or("-"));
                header.insert_header(http::header::CONTENT_LENGTH, body.len())?;
                Ok((header, body))
            }
            _ => Ok((header, body)),
        }
    }

    /// Adds the request id to the edits of the request `upstream` on its way to the backend;
    /// when Floodgate made it, the id the client sent, if any, goes apart as it came.
    pub(super) fn forward_id(&self, upstream: &RequestHeader, edits: &mut HeaderEdits) {
        let Some((name, id)) = &self.request_id else {
            return;
        };
        if self.own_id.is_some() {
            if let Some(clients) = request_id::clients_own(&upstream.headers, name) {
                edits.set(request_id::CLIENT_ID, clients);
            }
        }
        edits.set(name.clone(), id.clone());
    }

    /// Adds the request id to the edits of a backend's response.
    pub(super) fn stamp_edits(&self, edits: &mut HeaderEdits) {
        if let Some((name, value)) = &self.request_id {
            edits.set(name.clone(), value.clone());
        }
    }
}

/// The `Via` protocol version of `version`.
pub(super) fn via_version(version: Version) -> &'static str {
    match version {
        Version::HTTP_09 => "0.9",
        Version::HTTP_10 => "1.0",
        Version::HTTP_2 => "2",
        Version::HTTP_3 => "3",
        _ => "1.1",
    }
}

/// This hop's `Via` element for a message of `version` (`1.1 floodgate`): a constant, so a
/// message that came without `Via` gets it without an allocation.
pub(super) fn via_hop(version: Version) -> HeaderValue {
    HeaderValue::from_static(match version {
        Version::HTTP_09 => "0.9 floodgate",
        Version::HTTP_10 => "1.0 floodgate",
        Version::HTTP_2 => "2 floodgate",
        Version::HTTP_3 => "3 floodgate",
        _ => "1.1 floodgate",
    })
}

/// Writes an answer the proxy made itself (a refusal, an error): stamped with the request id
/// (in the header, and as `ref` in a problem body), in gRPC's form for a gRPC request.
pub(super) async fn write_answer(
    session: &mut Session,
    front: &Front,
    header: Box<ResponseHeader>,
    body: Bytes,
) -> Result<()> {
    let grpc = front.grpc.then(|| grpc::refusal(&header, &body)).flatten();
    let (mut header, body) = match grpc {
        Some(grpc) => (grpc, Bytes::new()),
        None => front.refer(header, body)?,
    };
    front.stamp(&mut header)?;
    if body.is_empty() {
        // The header ends the stream: gRPC's trailers-only form (on HTTP/2, one HEADERS frame
        // with END_STREAM), or an empty answer.
        let task = HttpTask::Header(header, true);
        session
            .as_downstream_mut()
            .response_duplex_vec(vec![task])
            .await?;
        return Ok(());
    }
    session.write_response_header(header, false).await?;
    session.write_response_body(Some(body), true).await
}
