//! The line of a request whose head was answered before it was whole: refused by pingora's
//! parser (400) or too large (431). Such a request never reaches the proxy, but nginx logs
//! it, and CrowdSec's scenarios count it: the line says what the head's first bytes say (its
//! request line, at most [`REFUSED_HEAD_BYTES`](crate::proxy::REFUSED_HEAD_BYTES) of it), the
//! client as the TCP peer (the headers were never read).

use super::combined::{combined_line, CombinedEntry};
use crate::proxy::RefusedHead;
use http::Version;
use std::net::IpAddr;
use std::time::SystemTime;

/// The request line of a refused head, as far as it can be read.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct RequestLine<'a> {
    /// The method, when the line starts with a token; empty otherwise.
    pub(super) method: &'a str,
    /// The target (or, when the line has no method, the whole line as read).
    pub(super) target: &'a [u8],
    /// The version the line names (HTTP/1.1 when it names none).
    pub(super) version: Version,
}

/// The request line that starts `head`.
pub(super) fn request_line(head: &[u8]) -> RequestLine<'_> {
    let end = head.iter().position(|&b| b == b'\r' || b == b'\n');
    let line = &head[..end.unwrap_or(head.len())];
    let mut parts = line.splitn(3, |&b| b == b' ');
    let method = parts.next().unwrap_or_default();
    let is_token = !method.is_empty() && method.iter().all(|b| b.is_ascii_alphabetic());
    let (Some(target), true) = (parts.next(), is_token) else {
        return RequestLine {
            method: "",
            target: line,
            version: Version::HTTP_11,
        };
    };
    let version = match parts.next() {
        Some(b"HTTP/1.0") => Version::HTTP_10,
        _ => Version::HTTP_11,
    };
    RequestLine {
        method: std::str::from_utf8(method).unwrap_or_default(),
        target,
        version,
    }
}

/// Floodgate's own line for `refused`: like a request's, with no decision or caller.
pub(super) fn floodgate_refused(refused: &RefusedHead) -> String {
    let line = request_line(&refused.head);
    let mut target = String::new();
    super::combined::escape(&mut target, line.target);
    format!(
        "{} {} status={} decision= policy=- identity=- id=- ms=0.000 refused=head",
        if line.method.is_empty() {
            "-"
        } else {
            line.method
        },
        target,
        refused.status
    )
}

/// nginx's `combined` line for `refused` from `peer`, ending at `at`.
pub(super) fn combined_refused(
    refused: &RefusedHead,
    peer: Option<IpAddr>,
    at: SystemTime,
) -> String {
    let line = request_line(&refused.head);
    combined_line(&CombinedEntry {
        client: peer,
        at,
        method: line.method,
        target: line.target,
        version: line.version,
        status: refused.status,
        body_bytes: 0,
        referer: None,
        user_agent: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    fn refused(head: &[u8]) -> RefusedHead {
        RefusedHead {
            status: 400,
            head: head.into(),
        }
    }

    #[test]
    fn a_request_line_is_read_as_far_as_it_goes() {
        let line = request_line(b"GET /a b HTTP/1.0\r\nHost: x\r\n");
        assert_eq!((line.method, line.target), ("GET", &b"/a"[..]));
        let line = request_line(b"GET /wp-login.php HTTP/1.1\r\nBad Header\r\n\r\n");
        assert_eq!(line.target, b"/wp-login.php");
        let line = request_line(b"\x16\x03\x01\x02\x00");
        assert_eq!(
            (line.method, line.target),
            ("", &b"\x16\x03\x01\x02\x00"[..])
        );
        assert_eq!(request_line(b"").target, b"");
    }

    #[test]
    fn the_lines_name_the_status_and_what_was_asked_for() {
        let at = UNIX_EPOCH + Duration::from_secs(1_795_731_139);
        let head = refused(b"GET /.env HTTP/1.1\r\nX: \x01\r\n");
        let peer = "203.0.113.7".parse().ok();
        assert_eq!(
            combined_refused(&head, peer, at),
            "203.0.113.7 - - [26/Nov/2026:22:12:19 +0000] \"GET /.env HTTP/1.1\" 400 0 \"-\" \"-\""
        );
        let line = floodgate_refused(&refused(b"\x16\x03\x01\"x"));
        assert!(
            line.starts_with("- \\x16\\x03\\x01\\x22x status=400 "),
            "{line}"
        );
    }
}
