//! What the client gets of a backend's response header: no hop-by-hop fields (RFC 9110
//! §7.6.1), the request id, optionally `Via`; and whether the caller's `RateLimit` headers may
//! ride on it (not when a shared cache may store it, RFC 9111 §3 and §3.5).

use super::edits::HeaderEdits;
use super::front::{via_hop, Front};
use http::header::{CACHE_CONTROL, CONNECTION, EXPIRES, UPGRADE, VIA};
use http::{HeaderName, HeaderValue};
use pingora::http::ResponseHeader;
use smallvec::SmallVec;

/// Whether `name` is a hop-by-hop field of a response (RFC 9110 §7.6.1) besides those its
/// `Connection` names; `Connection` and `Upgrade` stay on a protocol switch (`switching`),
/// which they complete. `Transfer-Encoding` is pingora's: it frames the body itself.
fn hop_by_hop(name: &HeaderName, switching: bool) -> bool {
    match name.as_str() {
        "keep-alive"
        | "proxy-connection"
        | "proxy-authenticate"
        | "proxy-authorization"
        | "trailer"
        | "te" => true,
        "connection" | "upgrade" => !switching,
        _ => false,
    }
}

/// What makes `resp` fit to pass on to the client of `front`.
pub(super) fn edits(resp: &ResponseHeader, front: &Front) -> HeaderEdits {
    let mut edits = HeaderEdits::default();
    strip_hop_by_hop(resp, &mut edits);
    front.stamp_edits(&mut edits);
    if front.via {
        edits.set(VIA, via(resp));
    }
    edits
}

/// The `Via` of `resp` with this hop's element appended: the constant element alone when the
/// backend sent none; else the lines as they came, written on the stack while they fit.
fn via(resp: &ResponseHeader) -> HeaderValue {
    let hop = via_hop(resp.version);
    let mut lines = resp.headers.get_all(VIA).iter().peekable();
    if lines.peek().is_none() {
        return hop;
    }
    let mut vias: SmallVec<[u8; 128]> = SmallVec::new();
    for line in lines {
        vias.extend_from_slice(line.as_bytes());
        vias.extend_from_slice(b", ");
    }
    vias.extend_from_slice(hop.as_bytes());
    // Lines that were header values, joined by `, `, are one.
    HeaderValue::from_bytes(&vias).unwrap_or(hop)
}

/// Removes the hop-by-hop fields of `resp` (in `edits`); a `101 Switching Protocols` keeps
/// `Connection` and `Upgrade`, which complete the upgrade. One pass over the names.
fn strip_hop_by_hop(resp: &ResponseHeader, edits: &mut HeaderEdits) {
    let switching = resp.status == 101;
    let named = resp
        .headers
        .get_all(CONNECTION)
        .iter()
        .flat_map(|line| line.as_bytes().split(|&b| b == b','))
        .map(<[u8]>::trim_ascii)
        .filter(|token| !is_connection_option(token))
        .filter_map(|token| HeaderName::from_bytes(token).ok())
        .filter(|name| !(switching && (name == UPGRADE || name == CONNECTION)));
    let fixed = resp
        .headers
        .keys()
        .filter(|name| hop_by_hop(name, switching))
        .cloned();
    for name in named.chain(fixed) {
        edits.remove(name);
    }
}

/// Whether a `Connection` token is one of the connection options nearly every response
/// carries (`keep-alive`, `close`), which name no field to remove: `Keep-Alive` goes by the
/// fixed list and `Close` is a reserved field name (RFC 9110 §16.3.2.1). Skipping them spares
/// each response a header-name parse (an allocation) and a lookup.
fn is_connection_option(token: &[u8]) -> bool {
    token.eq_ignore_ascii_case(b"keep-alive") || token.eq_ignore_ascii_case(b"close")
}

/// Whether a shared cache may store `resp` as `edits` leave it, the answer to a request that
/// carried `Authorization` or not (`authorized`): then one caller's `RateLimit` headers must
/// stay off it, or the cache would hand that caller's quota to others.
///
/// `no-store` or `private`: never (`private="field"` only keeps those fields out of a shared
/// cache, so it does not count). After `Authorization`, only
/// `public`, `s-maxage` or `must-revalidate` let a shared cache store it. Else `public`,
/// `s-maxage`, `max-age` or an `Expires` field do, whatever the status. A response with none of
/// these (heuristic freshness) keeps the headers: give such responses a `Cache-Control`.
pub(super) fn shared_cacheable(
    resp: &ResponseHeader,
    edits: &HeaderEdits,
    authorized: bool,
) -> bool {
    if resp.status.is_informational() {
        return false;
    }
    let kept = |name: &HeaderName| !edits.removes(name);
    // Directive names, and whether each has an argument (the lines looked up once).
    let lines = kept(&CACHE_CONTROL).then(|| resp.headers.get_all(CACHE_CONTROL));
    let directives = || {
        lines
            .iter()
            .flat_map(|lines| lines.iter())
            .flat_map(|line| line.as_bytes().split(|&b| b == b','))
            .map(|d| match d.iter().position(|&b| b == b'=') {
                Some(at) => (d[..at].trim_ascii(), true),
                None => (d.trim_ascii(), false),
            })
    };
    let has = |wanted: &[&[u8]]| {
        directives().any(|(d, _)| wanted.iter().any(|w| d.eq_ignore_ascii_case(w)))
    };
    let private =
        directives().any(|(d, qualified)| !qualified && d.eq_ignore_ascii_case(b"private"));
    if private || has(&[b"no-store"]) {
        return false;
    }
    if authorized {
        return has(&[b"public", b"s-maxage", b"must-revalidate"]);
    }
    has(&[b"public", b"s-maxage", b"max-age"])
        || (kept(&EXPIRES) && resp.headers.contains_key(EXPIRES))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, headers: &[(&str, &str)]) -> ResponseHeader {
        let mut resp = ResponseHeader::build(status, None).unwrap();
        for (name, value) in headers {
            resp.append_header(name.to_string(), *value).unwrap();
        }
        resp
    }

    fn stripped(mut resp: ResponseHeader) -> ResponseHeader {
        let mut edits = HeaderEdits::default();
        strip_hop_by_hop(&resp, &mut edits);
        edits.apply_to_response(&mut resp, false).unwrap();
        resp
    }

    #[test]
    fn hop_by_hop_fields_are_removed_but_an_upgrade_keeps_its_own() {
        let fields = [
            ("connection", "close, X-Secret"),
            ("x-secret", "1"),
            ("keep-alive", "timeout=5"),
            ("upgrade", "h2c"),
            ("proxy-authenticate", "Basic"),
            ("te", "trailers"),
            ("trailer", "x-checksum"),
            ("content-type", "text/plain"),
        ];
        let resp = stripped(response(200, &fields));
        let left: Vec<_> = resp.headers.keys().map(|k| k.as_str()).collect();
        assert_eq!(left, ["content-type"]);

        let fields = [
            ("connection", "Upgrade, keep-alive"),
            ("upgrade", "websocket"),
        ];
        let mut switching = response(101, &fields);
        switching.append_header("keep-alive", "timeout=5").unwrap();
        let switching = stripped(switching);
        assert_eq!(switching.headers["upgrade"], "websocket");
        assert!(switching.headers.contains_key("connection"));
        assert!(!switching.headers.contains_key("keep-alive"));
    }

    #[test]
    fn via_appends_this_hop_to_the_backends_lines_as_they_came() {
        assert_eq!(via(&response(200, &[])), "1.1 floodgate");
        let two = response(200, &[("via", "1.0 a"), ("via", "1.1 b")]);
        assert_eq!(via(&two), "1.0 a, 1.1 b, 1.1 floodgate");
    }

    #[test]
    fn publicly_cacheable_responses_are_known() {
        let none = HeaderEdits::default();
        let shared = |status, cc: &[(&str, &str)], auth| {
            shared_cacheable(&response(status, cc), &none, auth)
        };
        assert!(shared(200, &[("cache-control", "max-age=60")], false));
        assert!(shared(200, &[("cache-control", "public")], false));
        assert!(shared(404, &[("cache-control", "S-MaxAge=5")], false));
        assert!(shared(
            200,
            &[("expires", "Thu, 01 Jan 2037 00:00:00 GMT")],
            false
        ));
        assert!(!shared(
            200,
            &[("cache-control", "max-age=60, private")],
            false
        ));
        assert!(!shared(
            200,
            &[("cache-control", "no-store"), ("expires", "x")],
            false
        ));
        assert!(shared(
            200,
            &[("cache-control", "max-age=9, private=\"set-cookie\"")],
            false
        ));
        assert!(!shared(200, &[("cache-control", "no-cache")], false));
        assert!(!shared(200, &[], false));
        // After Authorization, max-age alone does not let a shared cache store it.
        assert!(!shared(200, &[("cache-control", "max-age=60")], true));
        assert!(shared(
            200,
            &[("cache-control", "max-age=60, public")],
            true
        ));
        assert!(!shared(101, &[("cache-control", "public")], false));
        // What the client gets decides: fields its `Connection` names do not reach it.
        let named = response(
            200,
            &[
                ("connection", "cache-control, expires"),
                ("cache-control", "public"),
                ("expires", "Thu, 01 Jan 2037 00:00:00 GMT"),
            ],
        );
        let mut edits = HeaderEdits::default();
        strip_hop_by_hop(&named, &mut edits);
        assert!(!shared_cacheable(&named, &edits, false));
    }
}
