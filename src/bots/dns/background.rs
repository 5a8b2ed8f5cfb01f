//! A small runtime of its own, on a thread of its own, where every DNS lookup runs: pingora
//! handles requests on several Tokio runtimes, and a lookup must neither depend on which one
//! asked nor end when the request that started it stops waiting (its answer fills the cache).

use std::future::Future;
use tokio::runtime::{Builder, Handle};
use tokio::sync::oneshot;

/// The lookup thread's runtime; it stops when this is dropped.
#[derive(Debug)]
pub(crate) struct Background {
    handle: Handle,
    /// Dropping it ends the thread's `block_on`, and the runtime is dropped on that thread
    /// (dropping a runtime inside another one's async context would panic).
    _stop: oneshot::Sender<()>,
}

impl Background {
    /// Starts the thread, named `name`.
    pub(crate) fn start(name: &str) -> std::io::Result<Self> {
        let runtime = Builder::new_current_thread().enable_all().build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                runtime.block_on(async {
                    // Err means the sender was dropped: time to stop either way.
                    let _ = stopped.await;
                });
            })?;
        Ok(Self {
            handle,
            _stop: stop,
        })
    }

    /// Runs `task` on the lookup thread.
    pub(crate) fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        self.handle.spawn(task);
    }

    /// The runtime's handle, to build what must be made inside it.
    pub(crate) fn handle(&self) -> &Handle {
        &self.handle
    }
}
