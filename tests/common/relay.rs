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
