//! A WebSocket echo backend (tokio-tungstenite on its own runtime): every text or binary
//! message comes back as sent. Stopped, with its connections, when dropped.

use futures_util::{SinkExt, StreamExt};
use std::thread::JoinHandle;

pub struct EchoBackend {
    pub addr: String,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl EchoBackend {
    pub fn start() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the echo backend");
        listener.set_nonblocking(true).expect("non-blocking");
        let addr = listener.local_addr().expect("address").to_string();
        let (shutdown, mut stop) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("echo runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                loop {
                    tokio::select! {
                        _ = &mut stop => return,
                        accepted = listener.accept() => {
                            let Ok((stream, _)) = accepted else { continue };
                            tokio::spawn(echo(stream));
                        }
                    }
                }
            });
        });
        Self {
            addr,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }
}

async fn echo(stream: tokio::net::TcpStream) {
    let Ok(mut ws) = tokio_tungstenite::accept_async(stream).await else {
        return;
    };
    while let Some(Ok(message)) = ws.next().await {
        let echoed = message.is_text() || message.is_binary();
        if echoed && ws.send(message).await.is_err() {
            return;
        }
    }
}

impl Drop for EchoBackend {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
