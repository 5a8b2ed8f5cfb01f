//! Raw HTTP/2 frames over a `TcpStream`, for what a real client would not send: streams past
//! the server's `SETTINGS_MAX_CONCURRENT_STREAMS`, a half-sent preface, a stream whose message
//! never comes.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// The client connection preface.
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// Frame types.
pub const HEADERS: u8 = 0x1;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const GOAWAY: u8 = 0x7;
/// Flags.
pub const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const ACK: u8 = 0x1;
/// `RST_STREAM`'s code for a stream the server did not process.
pub const REFUSED_STREAM: u32 = 0x7;

/// One frame read.
#[derive(Debug)]
pub struct Frame {
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
    pub payload: Vec<u8>,
}

impl Frame {
    /// The error code of a `RST_STREAM`.
    pub fn reset_code(&self) -> Option<u32> {
        let code = self.payload.get(..4)?;
        (self.kind == RST_STREAM).then(|| u32::from_be_bytes(code.try_into().unwrap()))
    }
}

/// A frame's bytes.
pub fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// Reads the next frame.
pub fn read_frame(conn: &mut TcpStream) -> io::Result<Frame> {
    let mut head = [0u8; 9];
    conn.read_exact(&mut head)?;
    let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
    let mut payload = vec![0u8; len];
    conn.read_exact(&mut payload)?;
    let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
    Ok(Frame {
        kind: head[3],
        flags: head[4],
        stream,
        payload,
    })
}

/// A connection to `port` past the preface: both sides' settings sent and acknowledged.
pub fn handshake(port: u16) -> TcpStream {
    let mut conn = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut hello = PREFACE.to_vec();
    hello.extend(frame(SETTINGS, 0, 0, &[]));
    conn.write_all(&hello).unwrap();
    loop {
        let f = read_frame(&mut conn).expect("the server's settings");
        if f.kind == SETTINGS && f.flags & ACK == 0 {
            break;
        }
    }
    conn.write_all(&frame(SETTINGS, ACK, 0, &[])).unwrap();
    conn
}

/// A literal header field without indexing (a name from HPACK's static table when `index` is
/// not 0, else `name` literally).
fn literal(block: &mut Vec<u8>, index: u8, name: &str, value: &str) {
    block.push(index);
    if index == 0 {
        block.push(name.len() as u8);
        block.extend_from_slice(name.as_bytes());
    }
    block.push(value.len() as u8);
    block.extend_from_slice(value.as_bytes());
}

/// The `HEADERS` frame opening `stream` as a `ShouldRateLimit` call, its message never sent.
pub fn call_headers(stream: u32) -> Vec<u8> {
    // :method POST and :scheme http, indexed.
    let mut block = vec![0x83, 0x86];
    let path = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";
    literal(&mut block, 0x04, ":path", path);
    literal(&mut block, 0x01, ":authority", "rls");
    // content-type is static entry 31: 15 in the prefix, 16 after it.
    block.extend_from_slice(&[0x0f, 0x10]);
    let value = "application/grpc";
    block.push(value.len() as u8);
    block.extend_from_slice(value.as_bytes());
    literal(&mut block, 0, "te", "trailers");
    frame(HEADERS, END_HEADERS, stream, &block)
}
