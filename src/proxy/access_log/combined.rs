//! nginx's `combined` log format, as nginx writes it: `$remote_addr - $remote_user
//! [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"`, with
//! nginx's default escaping (`"`, `\`, control and non-ASCII bytes as `\xHH`), so a request
//! cannot forge a line or a field. Time is an argument: the line is a pure function.

use http::Version;
use std::fmt::Write;
use std::net::IpAddr;
use std::time::SystemTime;

/// What one `combined` line says.
pub(super) struct CombinedEntry<'a> {
    /// The client address (`-` when unknown).
    pub(super) client: Option<IpAddr>,
    /// When the request ended.
    pub(super) at: SystemTime,
    /// The method.
    pub(super) method: &'a str,
    /// The request target as sent (path and query).
    pub(super) target: &'a [u8],
    /// The HTTP version.
    pub(super) version: Version,
    /// The status written (0: none).
    pub(super) status: u16,
    /// Body bytes sent to the client.
    pub(super) body_bytes: usize,
    /// `Referer`, when sent.
    pub(super) referer: Option<&'a [u8]>,
    /// `User-Agent`, when sent.
    pub(super) user_agent: Option<&'a [u8]>,
}

/// The line (without its newline).
pub(super) fn combined_line(entry: &CombinedEntry<'_>) -> String {
    let mut line = String::with_capacity(160);
    match entry.client {
        Some(ip) => write!(line, "{}", ip.to_canonical()),
        None => write!(line, "-"),
    }
    .ok();
    line.push_str(" - - [");
    line.push_str(&time_local(entry.at));
    line.push_str("] \"");
    escape(&mut line, entry.method.as_bytes());
    line.push(' ');
    escape(&mut line, entry.target);
    line.push(' ');
    line.push_str(version(entry.version));
    let _ = write!(line, "\" {} {} \"", entry.status, entry.body_bytes);
    escape(&mut line, entry.referer.unwrap_or(b"-"));
    line.push_str("\" \"");
    escape(&mut line, entry.user_agent.unwrap_or(b"-"));
    line.push('"');
    line
}

/// `$time_local` in UTC: `26/Nov/2026:22:12:19 +0000`.
fn time_local(at: SystemTime) -> String {
    match jiff::Timestamp::try_from(at) {
        Ok(t) => t.strftime("%d/%b/%Y:%H:%M:%S +0000").to_string(),
        Err(_) => "01/Jan/1970:00:00:00 +0000".to_owned(),
    }
}

fn version(v: Version) -> &'static str {
    match v {
        Version::HTTP_09 => "HTTP/0.9",
        Version::HTTP_10 => "HTTP/1.0",
        Version::HTTP_2 => "HTTP/2.0",
        Version::HTTP_3 => "HTTP/3.0",
        _ => "HTTP/1.1",
    }
}

/// nginx's default escaping of a variable in a log line.
pub(super) fn escape(line: &mut String, bytes: &[u8]) {
    for &b in bytes {
        match b {
            b'"' | b'\\' | 0..=0x1f | 0x7f.. => {
                let _ = write!(line, "\\x{b:02X}");
            }
            _ => line.push(b as char),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    fn entry<'a>(target: &'a [u8], agent: Option<&'a [u8]>) -> CombinedEntry<'a> {
        CombinedEntry {
            client: "203.0.113.7".parse().ok(),
            at: UNIX_EPOCH + Duration::from_secs(1_795_731_139),
            method: "GET",
            target,
            version: Version::HTTP_11,
            status: 404,
            body_bytes: 153,
            referer: None,
            user_agent: agent,
        }
    }

    #[test]
    fn a_line_is_what_nginx_writes_for_the_same_request() {
        let line = combined_line(&entry(b"/wp-login.php?x=1", Some(b"curl/7.88.1")));
        assert_eq!(
            line,
            "203.0.113.7 - - [26/Nov/2026:22:12:19 +0000] \"GET /wp-login.php?x=1 HTTP/1.1\" 404 153 \"-\" \"curl/7.88.1\""
        );
    }

    #[test]
    fn quotes_and_control_bytes_cannot_forge_a_field_or_a_line() {
        let line = combined_line(&entry(b"/a\"b", Some(b"x\" \"y\n203.0.113.9 - -\\")));
        assert!(line.contains("\"GET /a\\x22b HTTP/1.1\""), "{line}");
        assert!(
            line.ends_with("\"x\\x22 \\x22y\\x0A203.0.113.9 - -\\x5C\""),
            "{line}"
        );
        assert_eq!(line.matches('"').count(), 6, "{line}");
    }

    #[test]
    fn a_mapped_address_is_written_as_ipv4_and_a_missing_one_as_a_dash() {
        let mut e = entry(b"/", None);
        e.client = "::ffff:198.51.100.1".parse().ok();
        assert!(combined_line(&e).starts_with("198.51.100.1 - - ["));
        e.client = None;
        assert!(combined_line(&e).starts_with("- - - ["));
    }
}
