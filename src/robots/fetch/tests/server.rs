//! A tiny HTTP/1.1 server on a free loopback port for the fetch tests: it records each
//! request's head and answers what its handler says for the path, one request per connection.

use parking_lot::Mutex;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// What the server does with a request.
pub(super) enum Reply {
    /// A whole answer: status, extra header lines, body.
    Answer(u16, Vec<String>, Vec<u8>),
    /// A 200 announcing `len` bytes, its body written until done or refused (the bytes
    /// written are reported on [`Server::sent`]).
    Endless(usize),
    /// Reads the request and never answers.
    Hang,
}

type Handler = Box<dyn Fn(&str) -> Reply + Send + Sync>;

/// The server, stopped when dropped.
pub(super) struct Server {
    addr: SocketAddr,
    heads: Arc<Mutex<Vec<String>>>,
    handler: Arc<Mutex<Handler>>,
    sent: mpsc::UnboundedReceiver<usize>,
    task: JoinHandle<()>,
}

impl Server {
    /// A server answering `handler(path)`.
    pub(super) async fn start(handler: impl Fn(&str) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Mutex<Handler>> = Arc::new(Mutex::new(Box::new(handler)));
        let (report, sent) = mpsc::unbounded_channel();
        let (h, hd) = (Arc::clone(&heads), Arc::clone(&handler));
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (h, hd, report) = (Arc::clone(&h), Arc::clone(&hd), report.clone());
                tokio::spawn(serve(stream, h, hd, report));
            }
        });
        Self {
            addr,
            heads,
            handler,
            sent,
            task,
        }
    }

    /// A server answering 200 with `body` at every path.
    pub(super) async fn ok(body: &'static [u8]) -> Self {
        Self::start(move |_| Reply::Answer(200, vec![], body.to_vec())).await
    }

    /// `http://127.0.0.1:port`.
    pub(super) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Answers `handler(path)` from now on.
    pub(super) fn set(&self, handler: impl Fn(&str) -> Reply + Send + Sync + 'static) {
        *self.handler.lock() = Box::new(handler);
    }

    /// The request heads seen so far.
    pub(super) fn heads(&self) -> Vec<String> {
        self.heads.lock().clone()
    }

    /// The body bytes an [`Reply::Endless`] answer wrote before it ended.
    pub(super) async fn sent(&mut self) -> usize {
        self.sent.recv().await.unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The `Host` header of a request head.
pub(super) fn host_of(head: &str) -> Option<&str> {
    head.lines().find_map(|l| {
        l.strip_prefix("host: ")
            .or_else(|| l.strip_prefix("Host: "))
    })
}

async fn serve(
    mut stream: TcpStream,
    heads: Arc<Mutex<Vec<String>>>,
    handler: Arc<Mutex<Handler>>,
    report: mpsc::UnboundedSender<usize>,
) {
    let head = read_head(&mut stream).await;
    let path = head.split(' ').nth(1).unwrap_or("").to_owned();
    heads.lock().push(head);
    let reply = (handler.lock())(&path);
    match reply {
        Reply::Answer(status, headers, body) => {
            let mut out = format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\n", body.len());
            for h in headers {
                out.push_str(&h);
                out.push_str("\r\n");
            }
            out.push_str("Connection: close\r\n\r\n");
            let mut out = out.into_bytes();
            out.extend_from_slice(&body);
            let _ = stream.write_all(&out).await;
            let _ = stream.shutdown().await;
        }
        Reply::Endless(len) => {
            let _ = report.send(endless(&mut stream, len).await);
        }
        Reply::Hang => std::future::pending().await,
    }
}

/// Reads up to the end of the head (or 16 KiB, or the end of the stream).
async fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 << 10 {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// Writes a 200 of `len` bytes of [`pattern`]; how many body bytes were written.
async fn endless(stream: &mut TcpStream, len: usize) -> usize {
    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n\r\n");
    if stream.write_all(head.as_bytes()).await.is_err() {
        return 0;
    }
    let body = pattern(len);
    let mut sent = 0;
    for chunk in body.chunks(64 << 10) {
        if stream.write_all(chunk).await.is_err() {
            break;
        }
        sent += chunk.len();
    }
    sent
}

/// `len` bytes of `Disallow: /N` lines.
pub(super) fn pattern(len: usize) -> Vec<u8> {
    let mut body = Vec::with_capacity(len + 32);
    let mut n = 0u64;
    while body.len() < len {
        body.extend_from_slice(format!("Disallow: /{n}\n").as_bytes());
        n += 1;
    }
    body.truncate(len);
    body
}
