//! A TCP relay that keeps what each client sent first: the first bytes of every connection
//! (a TLS client's ClientHello), as the server behind it receives them. Optionally it cuts the
//! first TLS record into records of a few bytes each (a ClientHello split over several
//! records, which servers must put back together). Stopped when dropped.

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How much of each connection's first bytes is kept.
const KEPT: usize = 32 * 1024;

pub struct Tap {
    pub port: u16,
    firsts: Arc<Mutex<Vec<Vec<u8>>>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Tap {
    /// A tap on a free port in front of `127.0.0.1:target`.
    pub fn start(target: u16) -> Self {
        Self::start_splitting(target, None)
    }

    /// Like `start`, cutting each connection's first TLS record into records of at most
    /// `split` bytes when given.
    pub fn start_splitting(target: u16, split: Option<usize>) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind tap");
        listener.set_nonblocking(true).expect("non-blocking");
        let port = listener.local_addr().expect("address").port();
        let firsts = Arc::new(Mutex::new(Vec::new()));
        let kept = firsts.clone();
        let (shutdown, mut stop) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                loop {
                    tokio::select! {
                        _ = &mut stop => return,
                        accepted = listener.accept() => {
                            let Ok((inbound, _)) = accepted else { continue };
                            tokio::spawn(relay(inbound, target, kept.clone(), split));
                        }
                    }
                }
            });
        });
        Tap {
            port,
            firsts,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    /// The first bytes of every connection so far, in the order they were accepted.
    pub fn firsts(&self) -> Vec<Vec<u8>> {
        self.firsts.lock().unwrap().clone()
    }

    /// Forgets the connections so far.
    pub fn clear(&self) {
        self.firsts.lock().unwrap().clear();
    }
}

/// Relays `inbound` to `target` both ways, keeping the client's first bytes (as received,
/// before any split) in a slot of `firsts`.
async fn relay(
    inbound: TcpStream,
    target: u16,
    firsts: Arc<Mutex<Vec<Vec<u8>>>>,
    split: Option<usize>,
) {
    let Ok(outbound) = TcpStream::connect(("127.0.0.1", target)).await else {
        return;
    };
    let slot = {
        let mut all = firsts.lock().unwrap();
        all.push(Vec::new());
        all.len() - 1
    };
    let (mut ri, mut wi) = inbound.into_split();
    let (mut ro, mut wo) = outbound.into_split();
    let upward = async move {
        let mut buf = vec![0u8; 16 * 1024];
        let mut first_record = Vec::new();
        loop {
            let n = match ri.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let mut chunk = buf[..n].to_vec();
            {
                let mut all = firsts.lock().unwrap();
                let kept = &mut all[slot];
                let room = KEPT.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..n.min(room)]);
            }
            if let Some(size) = split {
                chunk = split_first_record(&mut first_record, chunk, size);
            }
            if wo.write_all(&chunk).await.is_err() {
                break;
            }
        }
        let _ = wo.shutdown().await;
    };
    let downward = async move {
        let _ = tokio::io::copy(&mut ro, &mut wi).await;
        let _ = wi.shutdown().await;
    };
    tokio::join!(upward, downward);
}

/// What to send for `chunk` when the connection's first record is cut into records of at
/// most `size` bytes: `pending` holds the first record while it is incomplete (`None` once
/// it was sent).
fn split_first_record(pending: &mut Vec<u8>, chunk: Vec<u8>, size: usize) -> Vec<u8> {
    const DONE: u8 = 0xff;
    if pending.first() == Some(&DONE) {
        return chunk;
    }
    pending.extend_from_slice(&chunk);
    let Some(header) = pending.get(..5) else {
        return Vec::new();
    };
    let len = 5 + usize::from(u16::from_be_bytes([header[3], header[4]]));
    if pending.len() < len {
        return Vec::new();
    }
    let (kind, version) = (header[0], [header[1], header[2]]);
    let mut out = Vec::new();
    for piece in pending[5..len].chunks(size) {
        out.push(kind);
        out.extend_from_slice(&version);
        out.extend_from_slice(&(piece.len() as u16).to_be_bytes());
        out.extend_from_slice(piece);
    }
    out.extend_from_slice(&pending[len..]);
    *pending = vec![DONE];
    out
}

impl Drop for Tap {
    fn drop(&mut self) {
        if let Some(stop) = self.shutdown.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
