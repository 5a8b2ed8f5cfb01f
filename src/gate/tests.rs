//! A gate made from config text for the gate's own tests: the memory store, in-process
//! control, a fixed digest key.

use super::{Deciders, Gate};
use crate::identity::IdentityKey;
use crate::limiter::{Fallback, MemorySlots, MemoryStore};
use crate::telemetry::Metrics;
use std::path::Path;
use std::sync::Arc;

/// The gate of a config of one backend and `tables` (access lists, policies).
pub(crate) fn from_config(tables: &str) -> Gate {
    let text = format!(
        "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n{tables}"
    );
    let config = crate::config::parse(&text, Path::new("t.toml")).expect("a config");
    let limiter: Arc<MemoryStore> = Arc::new(MemoryStore::new(1000));
    let deciders = Deciders {
        control: Arc::new(crate::control::Control::in_process(limiter.clone())),
        limiter,
        in_flight: Arc::new(MemorySlots::new()),
        fallback: Fallback::Deny,
    };
    Gate::new(
        config.access.clone(),
        &config.policies,
        config.identity.clone(),
        IdentityKey::from_bytes([7; 32]),
        deciders,
        &Metrics::new(),
    )
}
