//! What the backend is told about the request's way in: `X-Forwarded-For` (every incoming line
//! merged, then the peer), `X-Forwarded-Proto`, `X-Forwarded-Host`, `Forwarded` (RFC 7239),
//! optionally `Via`, the request id, and the pool's `Host`.
//!
//! `X-Forwarded-Proto`, `X-Forwarded-Host` and `Forwarded` from a client are replaced by the
//! proxy's own; a trusted proxy's (`identity.ip.trusted_proxies`) are kept, and its `Forwarded`
//! gets this hop's element appended.

use super::decide;
use super::front::{via_version, Front};
use bytes::Bytes;
use http::header::{FORWARDED, HOST, VIA};
use http::HeaderValue;
use pingora::http::RequestHeader;
use pingora::proxy::Session;
use pingora::{Error, ErrorType, Result};
use std::fmt::Write as _;
use std::io::Write as _;
use std::net::IpAddr;

const X_FORWARDED_FOR: &str = "x-forwarded-for";
const X_FORWARDED_PROTO: &str = "x-forwarded-proto";
const X_FORWARDED_HOST: &str = "x-forwarded-host";

/// Sets the forwarding headers of `upstream`, the request of `session` on its way to a
/// backend; `host` is the pool's `Host`, if it sets one.
pub(super) fn apply(
    session: &Session,
    upstream: &mut RequestHeader,
    front: &Front,
    host: Option<&str>,
) -> Result<()> {
    let req = session.req_header();
    let client_host = req
        .headers
        .get(HOST)
        .map(|h| h.as_bytes().to_vec())
        .or_else(|| req.uri.authority().map(|a| a.as_str().as_bytes().to_vec()));
    if let Some(host) = host {
        upstream.insert_header(HOST, host)?;
    }
    let proto = if front.tls { "https" } else { "http" };
    let peer = decide::peer_ip(session);
    if let Some(ip) = peer {
        forwarded_for(upstream, ip)?;
    }
    if !front.trusted_peer || !upstream.headers.contains_key(X_FORWARDED_PROTO) {
        upstream.insert_header(X_FORWARDED_PROTO, proto)?;
    }
    if !front.trusted_peer || !upstream.headers.contains_key(X_FORWARDED_HOST) {
        if let Some(h) = &client_host {
            upstream.insert_header(X_FORWARDED_HOST, value(h.clone())?)?;
        } else {
            upstream.remove_header(X_FORWARDED_HOST);
        }
    }
    let element = forwarded_element(peer, client_host.as_deref(), proto);
    let prior = match front.trusted_peer {
        true => merged(upstream, FORWARDED.as_str()),
        false => Vec::new(),
    };
    upstream.insert_header(FORWARDED, value(joined(prior, element.as_bytes()))?)?;
    if front.via {
        let hop = format!("{} floodgate", via_version(req.version));
        let vias = merged(upstream, VIA.as_str());
        upstream.insert_header(VIA, value(joined(vias, hop.as_bytes()))?)?;
    }
    if let Some((name, id)) = &front.request_id {
        upstream.insert_header(name.clone(), id.clone())?;
    }
    Ok(())
}

/// Every incoming line of `X-Forwarded-For`, in order, then the peer: one list, as the
/// limiter read it.
fn forwarded_for(upstream: &mut RequestHeader, ip: IpAddr) -> Result<()> {
    let mut list = merged(upstream, X_FORWARDED_FOR);
    if !list.is_empty() {
        list.extend_from_slice(b", ");
    }
    // Writing to a Vec cannot fail.
    let _ = write!(list, "{ip}");
    upstream.insert_header(X_FORWARDED_FOR, value(list)?)
}

/// The non-empty lines of header `name`, joined by `, `.
fn merged(req: &RequestHeader, name: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
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
fn joined(mut list: Vec<u8>, item: &[u8]) -> Vec<u8> {
    if !list.is_empty() {
        list.extend_from_slice(b", ");
    }
    list.extend_from_slice(item);
    list
}

/// This hop's `Forwarded` element (RFC 7239): `for`, `host` and `proto`.
fn forwarded_element(peer: Option<IpAddr>, host: Option<&[u8]>, proto: &str) -> String {
    let mut element = String::with_capacity(64);
    match peer.map(|ip| ip.to_canonical()) {
        Some(IpAddr::V4(ip)) => {
            let _ = write!(element, "for={ip};");
        }
        Some(IpAddr::V6(ip)) => {
            let _ = write!(element, "for=\"[{ip}]\";");
        }
        None => element.push_str("for=unknown;"),
    }
    if let Some(host) = host.and_then(|h| std::str::from_utf8(h).ok()) {
        element.push_str("host=\"");
        for c in host.chars() {
            if c == '"' || c == '\\' {
                element.push('\\');
            }
            element.push(c);
        }
        element.push_str("\";");
    }
    element.push_str("proto=");
    element.push_str(proto);
    element
}

fn value(bytes: Vec<u8>) -> Result<HeaderValue> {
    HeaderValue::from_maybe_shared(Bytes::from(bytes))
        .map_err(|_| Error::explain(ErrorType::InvalidHTTPHeader, "a forwarding header"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forwarded_elements_quote_ipv6_and_hosts() {
        let v4 = "192.0.2.7".parse().ok();
        assert_eq!(
            forwarded_element(v4, Some(b"example.com:8080"), "https"),
            "for=192.0.2.7;host=\"example.com:8080\";proto=https"
        );
        let v6 = "2001:db8::1".parse().ok();
        assert_eq!(
            forwarded_element(v6, Some(b"a\"b"), "http"),
            "for=\"[2001:db8::1]\";host=\"a\\\"b\";proto=http"
        );
        assert_eq!(
            forwarded_element(None, None, "http"),
            "for=unknown;proto=http"
        );
    }

    #[test]
    fn lines_merge_in_order_without_empty_ones() {
        let mut req = RequestHeader::build("GET", b"/", None).unwrap();
        for line in ["a, b", " ", "c"] {
            req.append_header("x-forwarded-for", line).unwrap();
        }
        assert_eq!(merged(&req, "x-forwarded-for"), b"a, b, c");
        forwarded_for(&mut req, "192.0.2.1".parse().unwrap()).unwrap();
        assert_eq!(req.headers["x-forwarded-for"], "a, b, c, 192.0.2.1");
        assert_eq!(joined(Vec::new(), b"x"), b"x");
    }
}
