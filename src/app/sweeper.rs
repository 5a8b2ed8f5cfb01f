//! The background service that keeps downstream HTTP/1 connections to their deadlines: every
//! [`SWEEP_EVERY`] it sweeps the listener's [`HeadWatches`] (heads not whole within
//! `server.header_timeout`, idle waits past `server.keepalive_timeout`).

use crate::proxy::{HeadWatches, SWEEP_EVERY};
use async_trait::async_trait;
use pingora::server::ShutdownWatch;
use pingora::services::background::BackgroundService;
use std::sync::Arc;
use std::time::Instant;
use tokio::time::MissedTickBehavior;

/// Sweeps one listener's connections.
pub(super) struct Sweeper {
    watches: Arc<HeadWatches>,
}

impl Sweeper {
    /// The sweeper of `watches`.
    pub(super) fn new(watches: Arc<HeadWatches>) -> Self {
        Self { watches }
    }
}

#[async_trait]
impl BackgroundService for Sweeper {
    /// Sweeps until the process ends: connections still open in a graceful shutdown's grace
    /// period keep their deadlines.
    async fn start(&self, _shutdown: ShutdownWatch) {
        let mut tick = tokio::time::interval(SWEEP_EVERY);
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            self.watches.sweep(Instant::now());
        }
    }
}
