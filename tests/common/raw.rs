//! Raw HTTP/1.x over a `TcpStream`, for requests a real client would not send as written
//! (dot segments, no `Host`, duplicate headers, huge or slow heads).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A connection to the proxy on `port` whose reads give up after 10 s.
pub fn connect(port: u16) -> TcpStream {
    let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to the proxy");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    stream
}

/// Sends `head` (and whatever follows it) on a new connection and reads until the proxy
/// closes it: the whole response text.
pub fn exchange(port: u16, head: &str) -> String {
    let mut stream = connect(port);
    stream.write_all(head.as_bytes()).expect("send the request");
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// `GET target` with `Connection: close` and the extra header lines `headers` (each ending
/// in `\r\n`): the response status.
pub fn get(port: u16, target: &str, headers: &str) -> u16 {
    let head =
        format!("GET {target} HTTP/1.1\r\nHost: localhost\r\n{headers}Connection: close\r\n\r\n");
    status(&exchange(port, &head))
}

/// The status of a response's text, 0 if there is none.
pub fn status(response: &str) -> u16 {
    response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0)
}

/// Reads one response (head and a `Content-Length` body) from a kept-alive connection.
pub fn read_response(stream: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut byte = [0u8; 1];
    while !out.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => out.push(byte[0]),
            _ => return String::from_utf8_lossy(&out).into_owned(),
        }
    }
    let head = String::from_utf8_lossy(&out).into_owned();
    let length = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    let _ = stream.read_exact(&mut body);
    head + &String::from_utf8_lossy(&body)
}
