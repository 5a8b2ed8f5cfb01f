//! A backend that answers with bytes written by hand, for answers a well-behaved server
//! library would not send: a chunked 200 cut after 5,000 bytes (`/cut`), a `Content-Length`
//! body cut short (`/short`), a stream that goes quiet after its first event (`/quiet`), hop-by-
//! hop headers (`/hop`), a publicly cacheable answer (`/public`), the request head it received
//! as the body of a `200 Fine` carrying `X-Mixed-Case` (`/head`); anything else gets
//! `200 ok` with `Cache-Control: no-cache`. Each connection serves one request. Stopped
//! when dropped.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The body bytes `/cut` and `/short` send before failing.
pub const CUT_AFTER: usize = 5000;

pub struct Scripted {
    pub addr: String,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Scripted {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the scripted backend");
        listener.set_nonblocking(true).expect("non-blocking");
        let addr = listener.local_addr().expect("address").to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            while !stopping.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        std::thread::spawn(move || serve(stream));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Self {
            addr,
            stop,
            thread: Some(thread),
        }
    }
}

fn serve(mut stream: TcpStream) {
    let _ = stream.set_nonblocking(false);
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let text = String::from_utf8_lossy(&head);
    let path = text.split(' ').nth(1).unwrap_or("/").to_owned();
    let filler = vec![b'a'; CUT_AFTER];
    let _ = match path.as_str() {
        "/cut" => {
            let mut out = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n{CUT_AFTER:x}\r\n"
            )
            .into_bytes();
            out.extend_from_slice(&filler);
            out.extend_from_slice(b"\r\n");
            stream.write_all(&out)
        }
        "/short" => {
            let mut out = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
                CUT_AFTER * 2
            )
            .into_bytes();
            out.extend_from_slice(&filler);
            stream.write_all(&out)
        }
        "/quiet" => {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
                        Transfer-Encoding: chunked\r\n\r\n6\r\ndata:\n\r\n";
            let written = stream.write_all(head.as_bytes());
            // Silent far past any read_timeout a test sets.
            std::thread::sleep(Duration::from_secs(8));
            written
        }
        "/hop" => stream.write_all(
            b"HTTP/1.1 200 OK\r\nConnection: X-Hop-Secret, close\r\nX-Hop-Secret: 1\r\n\
              Keep-Alive: timeout=5\r\nUpgrade: h2c\r\nProxy-Authenticate: Basic realm=\"x\"\r\n\
              Proxy-Connection: keep-alive\r\nTrailer: X-Checksum\r\nCache-Control: no-cache\r\n\
              Content-Type: text/plain\r\nContent-Length: 2\r\n\r\nok",
        ),
        "/head" => {
            let mut out = format!(
                "HTTP/1.1 200 Fine\r\nX-Mixed-Case: yes\r\nContent-Type: text/plain\r\n\
                 Content-Length: {}\r\n\r\n",
                head.len()
            )
            .into_bytes();
            out.extend_from_slice(&head);
            stream.write_all(&out)
        }
        "/public" => stream.write_all(
            b"HTTP/1.1 200 OK\r\nCache-Control: public, max-age=60\r\n\
              Content-Type: text/plain\r\nContent-Length: 2\r\n\r\nok",
        ),
        _ => stream.write_all(
            b"HTTP/1.1 200 OK\r\nCache-Control: no-cache\r\nContent-Type: text/plain\r\n\
              Content-Length: 2\r\n\r\nok",
        ),
    };
    let _ = stream.flush();
    // A short pause so the bytes leave before the connection is cut.
    std::thread::sleep(Duration::from_millis(100));
}

impl Drop for Scripted {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
