//! W3C Trace Context's `traceparent`: read from a trusted caller, written to the backend.

use http::HeaderValue;
use opentelemetry::trace::{SpanId, TraceId};

/// The span a trusted caller says the request belongs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parent {
    /// The trace the request joins.
    pub trace_id: TraceId,
    /// The caller's span.
    pub span_id: SpanId,
    /// Whether the caller records the trace (flag `01`).
    pub sampled: bool,
}

impl Parent {
    /// The parent a `traceparent` value names: version `00`'s 55 characters (a later
    /// version's may go on after a `-`), lowercase hex, neither id all zeros; `None` for
    /// anything else (the request then starts a trace of its own).
    pub fn parse(value: &[u8]) -> Option<Self> {
        let text = std::str::from_utf8(value).ok()?.trim();
        let head = text.get(..55)?;
        let version = head.get(..2)?;
        let fits = match version {
            "00" => text.len() == 55,
            "ff" => false,
            _ => text.len() == 55 || text.as_bytes()[55] == b'-',
        };
        let mut parts = head.split('-');
        let (v, trace, span, flags) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let shaped = [(v, 2), (trace, 32), (span, 16), (flags, 2)]
            .iter()
            .all(|(part, len)| part.len() == *len && part.bytes().all(is_lower_hex));
        if !fits || !shaped {
            return None;
        }
        let trace_id = TraceId::from_hex(trace).ok()?;
        let span_id = SpanId::from_hex(span).ok()?;
        let flags = u8::from_str_radix(flags, 16).ok()?;
        (trace_id != TraceId::INVALID && span_id != SpanId::INVALID).then_some(Self {
            trace_id,
            span_id,
            sampled: flags & 1 == 1,
        })
    }
}

fn is_lower_hex(b: u8) -> bool {
    b.is_ascii_digit() || (b'a'..=b'f').contains(&b)
}

/// The `traceparent` naming `span_id` of `trace_id` as the parent, sampled or not. Written
/// into a buffer on the stack: every traced request sends one, kept or not.
pub fn traceparent(trace_id: TraceId, span_id: SpanId, sampled: bool) -> HeaderValue {
    let mut text = *b"00-00000000000000000000000000000000-0000000000000000-00";
    hex_into(&mut text[3..35], &trace_id.to_bytes());
    hex_into(&mut text[36..52], &span_id.to_bytes());
    text[54] = if sampled { b'1' } else { b'0' };
    HeaderValue::from_bytes(&text).expect("hex and dashes are a header value")
}

/// Writes `bytes` as lowercase hex into `out` (twice as long).
fn hex_into(out: &mut [u8], bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (pair, byte) in out.chunks_exact_mut(2).zip(bytes) {
        pair[0] = DIGITS[usize::from(byte >> 4)];
        pair[1] = DIGITS[usize::from(byte & 0xf)];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_good_traceparent_is_read_and_written_back_the_same() {
        let parent = Parent::parse(GOOD.as_bytes()).unwrap();
        assert!(parent.sampled);
        assert_eq!(
            traceparent(parent.trace_id, parent.span_id, true),
            HeaderValue::from_static(GOOD)
        );
        let later = format!("01{}-what-comes-next", &GOOD[2..]);
        assert!(Parent::parse(later.as_bytes()).is_some());
        let unsampled = traceparent(parent.trace_id, parent.span_id, false);
        assert_eq!(
            unsampled,
            HeaderValue::from_str(&GOOD.replace("-01", "-00")).unwrap()
        );
    }

    #[test]
    fn a_malformed_traceparent_is_ignored() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
        ] {
            assert_eq!(Parent::parse(bad.as_bytes()), None, "{bad}");
        }
    }
}
