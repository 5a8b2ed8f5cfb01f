//! The ClientHello as it arrives: the TLS records a client sends first, read before the
//! handshake, their handshake fragments put back together into the one ClientHello message
//! (which may span several records). Bounded: no more than [`MAX_HELLO_BYTES`] are looked at.

use tls_parser::{parse_tls_record_header, TlsRecordType};

/// The most bytes read for a ClientHello: the largest record (16 KiB of plaintext) and its
/// header. A ClientHello that needs more is handed to the TLS library without a JA4.
pub const MAX_HELLO_BYTES: usize = 16 * 1024 + 5;

/// The length of a TLS record header, and of a handshake message header.
const RECORD_HEADER: usize = 5;
const MESSAGE_HEADER: usize = 4;

/// What the first bytes of a connection hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scan {
    /// The start of a ClientHello: read more.
    More,
    /// The whole ClientHello handshake message (type, length and body), its records'
    /// fragments joined.
    Hello(Vec<u8>),
    /// Not a ClientHello, or one too large to look at.
    Unusable,
}

/// What `read`, the first bytes a client sent, hold.
pub fn scan(read: &[u8]) -> Scan {
    let mut message = Vec::new();
    let mut rest = read;
    loop {
        if let Some(done) = whole(&mut message) {
            return done;
        }
        if rest
            .first()
            .is_some_and(|&b| b != TlsRecordType::Handshake.0)
        {
            return Scan::Unusable;
        }
        let Ok((body, header)) = parse_tls_record_header(rest) else {
            return more_if_room(read);
        };
        let len = usize::from(header.len);
        if header.record_type != TlsRecordType::Handshake || len == 0 {
            return Scan::Unusable;
        }
        let Some(fragment) = body.get(..len) else {
            return more_if_room(read);
        };
        message.extend_from_slice(fragment);
        rest = &body[len..];
    }
}

/// The scan's answer once `message` (the fragments so far) is a whole ClientHello, or cannot
/// become one; `None` while it may still.
fn whole(message: &mut Vec<u8>) -> Option<Scan> {
    let header = message.get(..MESSAGE_HEADER)?;
    if header[0] != 1 {
        return Some(Scan::Unusable);
    }
    let len = MESSAGE_HEADER
        + (usize::from(header[1]) << 16 | usize::from(header[2]) << 8)
        + usize::from(header[3]);
    if len + RECORD_HEADER > MAX_HELLO_BYTES {
        return Some(Scan::Unusable);
    }
    (message.len() >= len).then(|| {
        message.truncate(len);
        Scan::Hello(std::mem::take(message))
    })
}

/// `More`, unless `read` already holds as much as is ever looked at.
fn more_if_room(read: &[u8]) -> Scan {
    match read.len() < MAX_HELLO_BYTES {
        true => Scan::More,
        false => Scan::Unusable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A handshake record holding `fragment`.
    fn record(fragment: &[u8]) -> Vec<u8> {
        let len = u16::try_from(fragment.len()).unwrap().to_be_bytes();
        let mut r = vec![0x16, 0x03, 0x01, len[0], len[1]];
        r.extend_from_slice(fragment);
        r
    }

    /// A ClientHello message whose body is `body`.
    fn hello(body: &[u8]) -> Vec<u8> {
        let len = u32::try_from(body.len()).unwrap().to_be_bytes();
        let mut m = vec![1, len[1], len[2], len[3]];
        m.extend_from_slice(body);
        m
    }

    #[test]
    fn one_record_holds_the_hello_and_what_follows_is_left() {
        let message = hello(b"body");
        let mut read = record(&message);
        read.extend_from_slice(b"\x14\x03\x03\x00\x01\x01");
        assert_eq!(scan(&read), Scan::Hello(message));
    }

    #[test]
    fn a_hello_split_over_records_is_joined() {
        let message = hello(&[7; 300]);
        let (a, b) = message.split_at(3);
        let (b, c) = b.split_at(100);
        let read = [record(a), record(b), record(c)].concat();
        assert_eq!(scan(&read), Scan::Hello(message));
        for cut in 0..read.len() {
            assert_eq!(scan(&read[..cut]), Scan::More, "cut at {cut}");
        }
    }

    #[test]
    fn anything_but_a_client_hello_is_unusable() {
        assert_eq!(scan(b"GET / HTTP/1.1\r\n"), Scan::Unusable);
        assert_eq!(
            scan(b"\x15\x03\x01\x00\x02\x02\x28"),
            Scan::Unusable,
            "an alert"
        );
        assert_eq!(
            scan(&record(&[2, 0, 0, 1, 0])),
            Scan::Unusable,
            "a ServerHello"
        );
        assert_eq!(scan(&record(&[])), Scan::Unusable, "an empty record");
        assert_eq!(scan(&[]), Scan::More);
    }

    #[test]
    fn the_bound_is_one_record_of_the_largest_size() {
        let message = hello(&[7; 16 * 1024 - 4]);
        let read = record(&message);
        assert_eq!(read.len(), MAX_HELLO_BYTES);
        assert_eq!(scan(&read[..MAX_HELLO_BYTES - 1]), Scan::More);
        assert_eq!(scan(&read), Scan::Hello(message.clone()));
        let (a, b) = message.split_at(100);
        let split = [record(a), record(b)].concat();
        assert_eq!(
            scan(&split[..MAX_HELLO_BYTES]),
            Scan::Unusable,
            "past the bound"
        );
        assert_eq!(
            scan(&record(&[1, 0, 0x40, 0])),
            Scan::Unusable,
            "said to be larger"
        );
    }
}
