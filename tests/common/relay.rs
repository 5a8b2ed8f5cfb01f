//! A TCP relay between the proxy and Redis that can be slowed down: every chunk it forwards
//! waits the current delay first. Stopped, with its connections, when dropped.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub struct Relay {
    pub port: u16,
    delay_ms: Arc<AtomicU64>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Relay {
    /// A relay on a free port forwarding to `127.0.0.1:target`.
    pub fn start(target: u16) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind relay");
        listener.set_nonblocking(true).expect("non-blocking");
        let port = listener.local_addr().expect("address").port();
        let delay_ms = Arc::new(AtomicU64::new(0));
        let (shutdown, mut stop) = tokio::sync::oneshot::channel::<()>();
        let delay = delay_ms.clone();
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
                            let delay = delay.clone();
                            tokio::spawn(async move {
                                let Ok(outbound) = tokio::net::TcpStream::connect(("127.0.0.1", target)).await else { return };
                                let (ri, wi) = inbound.into_split();
                                let (ro, wo) = outbound.into_split();
                                tokio::join!(pump(ri, wo, delay.clone()), pump(ro, wi, delay));
                            });
                        }
                    }
                }
            });
        });
        Relay {
            port,
            delay_ms,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    /// Every chunk waits `delay` from now on.
    pub fn set_delay(&self, delay: Duration) {
        self.delay_ms
            .store(delay.as_millis() as u64, Ordering::SeqCst);
    }
}

async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    delay: Arc<AtomicU64>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let wait = delay.load(Ordering::SeqCst);
        if wait > 0 {
            tokio::time::sleep(Duration::from_millis(wait)).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A TCP relay to `127.0.0.1:target` that delays every chunk by the same time each way, as a
/// line a few milliseconds long would: chunks keep flowing while earlier ones are in the line
/// (pipelined), to the tens of microseconds (a thread per direction sleeps to each chunk's
/// time). Stopped, with its connections, when dropped.
pub struct DelayLine {
    pub port: u16,
    stop: Arc<std::sync::atomic::AtomicBool>,
    streams: Arc<std::sync::Mutex<Vec<std::net::TcpStream>>>,
    thread: Option<JoinHandle<()>>,
}

impl DelayLine {
    /// A line of `each_way` on a free port, to `127.0.0.1:target`.
    pub fn start(target: u16, each_way: Duration) -> Self {
        use std::sync::atomic::AtomicBool;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind delay line");
        listener.set_nonblocking(true).expect("non-blocking");
        let port = listener.local_addr().expect("address").port();
        let stop = Arc::new(AtomicBool::new(false));
        let streams = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (stopped, kept) = (stop.clone(), streams.clone());
        let thread = std::thread::spawn(move || {
            while !stopped.load(Ordering::SeqCst) {
                let Ok((inbound, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                let Ok(outbound) = std::net::TcpStream::connect(("127.0.0.1", target)) else {
                    continue;
                };
                let _ = inbound.set_nonblocking(false);
                for stream in [&inbound, &outbound] {
                    let _ = stream.set_nodelay(true);
                    if let Ok(clone) = stream.try_clone() {
                        kept.lock().expect("streams").push(clone);
                    }
                }
                line(&inbound, &outbound, each_way);
                line(&outbound, &inbound, each_way);
            }
        });
        DelayLine {
            port,
            stop,
            streams,
            thread: Some(thread),
        }
    }
}

/// Carries what `from` sends to `to`, each chunk `delay` after it was read.
fn line(from: &std::net::TcpStream, to: &std::net::TcpStream, delay: Duration) {
    use std::io::{Read, Write};
    use std::time::Instant;
    let (Ok(mut from), Ok(mut to)) = (from.try_clone(), to.try_clone()) else {
        return;
    };
    let (send, receive) = std::sync::mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0
                || send
                    .send((Instant::now() + delay, buf[..n].to_vec()))
                    .is_err()
            {
                break;
            }
        }
    });
    std::thread::spawn(move || {
        for (due, chunk) in receive {
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            if to.write_all(&chunk).is_err() {
                break;
            }
        }
        let _ = to.shutdown(std::net::Shutdown::Write);
    });
}

impl Drop for DelayLine {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for stream in self.streams.lock().expect("streams").drain(..) {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
