//! What the backend is told about the request's way in: `X-Forwarded-For` (every incoming line
//! merged, then the peer), `X-Forwarded-Proto`, `X-Forwarded-Host`, `Forwarded` (RFC 7239),
//! optionally `Via`, the request id, the pool's `Host`, and the request's JA4
//! and HTTP/2 fingerprint (`upstream.ja4_header`, `upstream.h2fp_header`), and its bot score
//! (`upstream.score_header`, `upstream.signals_header`).
//!
//! `X-Forwarded-Proto`, `X-Forwarded-Host` and `Forwarded` from a client are replaced by the
//! proxy's own; a trusted proxy's (`identity.ip.trusted_proxies`) are kept, and its `Forwarded`
//! gets this hop's element appended. The underscore spellings of all of these, and of the
//! headers the identity sources read (`X_Bot_Score`, `X_Api_Key`), are removed
//! ([`HeaderGuard`]).

use super::edits::HeaderEdits;
use super::front::{via_hop, Front};
use super::header_guard::HeaderGuard;
use super::ScoreHeaders;
use crate::identity::{H2Fp, Ja4, Score};
use http::header::{FORWARDED, HOST, VIA};
use http::{HeaderName, HeaderValue};
use pingora::http::RequestHeader;
use pingora::proxy::Session;
use pingora::{Error, ErrorType, Result};
use smallvec::SmallVec;
use std::io::Write as _;
use std::net::IpAddr;

const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
const X_FORWARDED_PROTO: HeaderName = HeaderName::from_static("x-forwarded-proto");
const X_FORWARDED_HOST: HeaderName = HeaderName::from_static("x-forwarded-host");

/// A header value being written: on the stack while it fits (it nearly always does), so the
/// finished value is the one allocation.
type Text = SmallVec<[u8; 128]>;

/// The forwarding headers of `upstream`, the request of `session` on its way to a backend;
/// `host` is the pool's `Host`, if it sets one.
pub(super) fn edits(
    session: &Session,
    upstream: &RequestHeader,
    front: &Front,
    host: Option<&str>,
) -> Result<HeaderEdits> {
    let mut edits = HeaderEdits::default();
    let req = session.req_header();
    let client_host = match req.headers.get(HOST) {
        Some(h) => Some(h.clone()),
        None => req
            .uri
            .authority()
            .and_then(|a| value(a.as_str().as_bytes()).ok()),
    };
    if let Some(host) = host {
        edits.set(HOST, value(host.as_bytes())?);
    }
    let proto = if front.tls { "https" } else { "http" };
    let peer = front.client.peer;
    if let Some(ip) = peer {
        edits.set(X_FORWARDED_FOR, forwarded_for(upstream, ip)?);
    }
    if !front.client.trusted_peer || !upstream.headers.contains_key(X_FORWARDED_PROTO) {
        edits.set(X_FORWARDED_PROTO, HeaderValue::from_static(proto));
    }
    if !front.client.trusted_peer || !upstream.headers.contains_key(X_FORWARDED_HOST) {
        match &client_host {
            Some(h) => edits.set(X_FORWARDED_HOST, h.clone()),
            None if upstream.headers.contains_key(X_FORWARDED_HOST) => {
                edits.remove(X_FORWARDED_HOST);
            }
            None => {}
        }
    }
    let mut element = match front.client.trusted_peer {
        true => merged(upstream, FORWARDED.as_str()),
        false => Text::new(),
    };
    if !element.is_empty() {
        element.extend_from_slice(b", ");
    }
    forwarded_element(
        &mut element,
        peer,
        client_host.as_ref().map(|h| h.as_bytes()),
        proto,
    );
    edits.set(FORWARDED, value(&element)?);
    if front.via {
        let hop = via_hop(req.version);
        let vias = merged(upstream, VIA.as_str());
        let via = match vias.is_empty() {
            true => hop,
            false => value(&joined(vias, hop.as_bytes()))?,
        };
        edits.set(VIA, via);
    }
    front.forward_id(upstream, &mut edits);
    Ok(edits)
}

/// Sets `header` on the way to the backend to the request's `ja4`, or removes it when the
/// JA4 is not known: a client's own is never passed on.
pub(super) fn ja4(edits: &mut HeaderEdits, header: &HeaderName, ja4: Option<Ja4>) {
    match ja4.and_then(|j| HeaderValue::from_str(j.as_str()).ok()) {
        Some(value) => edits.set(header.clone(), value),
        None => edits.remove(header.clone()),
    }
}

/// Sets `header` on the way to the backend to the request's HTTP/2 fingerprint `h2fp`, or
/// removes it when none is known: a client's own is never passed on.
pub(super) fn h2fp(edits: &mut HeaderEdits, header: &HeaderName, h2fp: Option<&H2Fp>) {
    match h2fp.and_then(|h| HeaderValue::from_str(h.as_str()).ok()) {
        Some(value) => edits.set(header.clone(), value),
        None => edits.remove(header.clone()),
    }
}

/// Sets the score headers on the way to the backend to the request's `score` (a number) and
/// its signals (names, comma-separated, `-` for none), or removes them when it was not
/// worked out: a client's own are never passed on.
pub(super) fn score(edits: &mut HeaderEdits, headers: &ScoreHeaders, score: Option<Score>) {
    if let Some(header) = &headers.score {
        match score.map(|s| HeaderValue::from(u16::from(s.value))) {
            Some(value) => edits.set(header.clone(), value),
            None => edits.remove(header.clone()),
        }
    }
    if let Some(header) = &headers.signals {
        match score.and_then(|s| HeaderValue::from_str(&s.signals.to_string()).ok()) {
            Some(value) => edits.set(header.clone(), value),
            None => edits.remove(header.clone()),
        }
    }
}

/// Removes from `upstream` on its way to the backend every underscore spelling of a header
/// `guard` keeps (`x_bot_score` beside the `x-bot-score` set above), which a backend folding
/// `_` into `-` would read as the real one.
pub(super) fn no_underscore_spellings(
    edits: &mut HeaderEdits,
    upstream: &RequestHeader,
    guard: &HeaderGuard,
) {
    for name in guard.underscore_spellings(&upstream.headers) {
        edits.remove(name);
    }
}

/// Removes a Privacy Pass token (`Authorization: PrivateToken …`) from `upstream` on its way
/// to the backend: it is Floodgate's to redeem, and the backend's `Authorization` is its
/// own (a `Bearer` token goes on).
pub(super) fn no_private_token(edits: &mut HeaderEdits, upstream: &RequestHeader) {
    let token = upstream
        .headers
        .get(http::header::AUTHORIZATION)
        .is_some_and(|v| crate::privacy_pass::is_private_token(v.as_bytes()));
    if token {
        edits.remove(http::header::AUTHORIZATION);
    }
}

/// Every incoming line of `X-Forwarded-For`, in order, then the peer: one list, as the
/// limiter read it.
fn forwarded_for(upstream: &RequestHeader, ip: IpAddr) -> Result<HeaderValue> {
    let mut list = match upstream.headers.contains_key(X_FORWARDED_FOR) {
        true => merged(upstream, X_FORWARDED_FOR.as_str()),
        false => Text::new(),
    };
    if !list.is_empty() {
        list.extend_from_slice(b", ");
    }
    write_ip(&mut list, ip);
    value(&list)
}

/// The non-empty lines of header `name`, joined by `, `.
fn merged(req: &RequestHeader, name: &str) -> Text {
    let mut out = Text::new();
    for line in req.headers.get_all(name) {
        let line = line.as_bytes().trim_ascii();
        if !line.is_empty() {
            if !out.is_empty() {
                out.extend_from_slice(b", ");
            }
            out.extend_from_slice(line);
        }
    }
    out
}

/// `list` with `item` appended, comma-separated.
fn joined(mut list: Text, item: &[u8]) -> Text {
    if !list.is_empty() {
        list.extend_from_slice(b", ");
    }
    list.extend_from_slice(item);
    list
}

/// Appends this hop's `Forwarded` element (RFC 7239) to `out`: `for`, `host` and `proto`.
fn forwarded_element(out: &mut Text, peer: Option<IpAddr>, host: Option<&[u8]>, proto: &str) {
    match peer.map(|ip| ip.to_canonical()) {
        Some(ip @ IpAddr::V4(_)) => {
            out.extend_from_slice(b"for=");
            write_ip(out, ip);
            out.push(b';');
        }
        Some(ip @ IpAddr::V6(_)) => {
            out.extend_from_slice(b"for=\"[");
            write_ip(out, ip);
            out.extend_from_slice(b"]\";");
        }
        None => out.extend_from_slice(b"for=unknown;"),
    }
    if let Some(host) = host.filter(|h| std::str::from_utf8(h).is_ok()) {
        out.extend_from_slice(b"host=\"");
        for &b in host {
            if b == b'"' || b == b'\\' {
                out.push(b'\\');
            }
            out.push(b);
        }
        out.extend_from_slice(b"\";");
    }
    out.extend_from_slice(b"proto=");
    out.extend_from_slice(proto.as_bytes());
}

/// Appends `ip` as text: an IPv4 address digit by digit (the common case, without the
/// formatting machinery), an IPv6 address as `Display` writes it.
fn write_ip(out: &mut Text, ip: IpAddr) {
    match ip {
        IpAddr::V4(v4) => {
            let mut digits = itoa::Buffer::new();
            for (i, octet) in v4.octets().into_iter().enumerate() {
                if i > 0 {
                    out.push(b'.');
                }
                out.extend_from_slice(digits.format(octet).as_bytes());
            }
        }
        // Writing to memory cannot fail.
        IpAddr::V6(v6) => {
            let _ = write!(out, "{v6}");
        }
    }
}

fn value(bytes: &[u8]) -> Result<HeaderValue> {
    HeaderValue::from_bytes(bytes)
        .map_err(|_| Error::explain(ErrorType::InvalidHTTPHeader, "a forwarding header"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forwarded_elements_quote_ipv6_and_hosts() {
        let element = |peer: Option<IpAddr>, host: Option<&[u8]>, proto| {
            let mut out = Text::new();
            forwarded_element(&mut out, peer, host, proto);
            String::from_utf8(out.to_vec()).unwrap()
        };
        let v4 = "192.0.2.7".parse().ok();
        assert_eq!(
            element(v4, Some(b"example.com:8080"), "https"),
            "for=192.0.2.7;host=\"example.com:8080\";proto=https"
        );
        let v6 = "2001:db8::1".parse().ok();
        assert_eq!(
            element(v6, Some(b"a\"b"), "http"),
            "for=\"[2001:db8::1]\";host=\"a\\\"b\";proto=http"
        );
        assert_eq!(element(None, None, "http"), "for=unknown;proto=http");
        let mapped = "::ffff:10.0.0.255".parse().ok();
        assert_eq!(element(mapped, None, "http"), "for=10.0.0.255;proto=http");
        for ip in [
            "0.0.0.0",
            "255.255.255.255",
            "10.20.3.4",
            "::1",
            "2001:db8::ffff:1",
        ] {
            let mut out = Text::new();
            write_ip(&mut out, ip.parse().unwrap());
            assert_eq!(&out[..], ip.as_bytes());
        }
    }

    #[test]
    fn lines_merge_in_order_without_empty_ones() {
        let mut req = RequestHeader::build("GET", b"/", None).unwrap();
        for line in ["a, b", " ", "c"] {
            req.append_header("x-forwarded-for", line).unwrap();
        }
        assert_eq!(&merged(&req, "x-forwarded-for")[..], b"a, b, c");
        let list = forwarded_for(&req, "192.0.2.1".parse().unwrap()).unwrap();
        assert_eq!(list, "a, b, c, 192.0.2.1");
        assert_eq!(&joined(Text::new(), b"x")[..], b"x");
    }
}
