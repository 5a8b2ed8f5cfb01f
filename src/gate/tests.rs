//! A gate made from config text for the gate's own tests: the memory store, in-process
//! control, a fixed digest key, a clock the test may set.

use super::{Deciders, Gate};
use crate::clock::Clock;
use crate::control::Control;
use crate::identity::IdentityKey;
use crate::limiter::{Fallback, MemorySlots, MemoryStore};
use crate::telemetry::Metrics;
use std::path::Path;
use std::sync::Arc;

/// The gate of a config of one backend and `tables` (access lists, policies).
pub(crate) fn from_config(tables: &str) -> Gate {
    from_config_by(tables, Clock::System).0
}

/// The gate of a config of one backend and `tables`, and its control, both going by `clock`.
pub(crate) fn from_config_by(tables: &str, clock: Clock) -> (Gate, Arc<Control>) {
    let text = format!(
        "[server]\nlisten = \"127.0.0.1:8080\"\n\n[upstream]\nbackends = [\"127.0.0.1:8000\"]\n{tables}"
    );
    let config = crate::config::parse(&text, Path::new("t.toml")).expect("a config");
    let limiter: Arc<MemoryStore> = Arc::new(MemoryStore::new(1000));
    let control = Arc::new(Control::in_process_by(limiter.clone(), clock.clone()));
    let deciders = Deciders {
        control: control.clone(),
        limiter,
        in_flight: Arc::new(MemorySlots::new()),
        fallback: Fallback::Deny,
        clock,
    };
    let gate = Gate::new(
        config.access.clone(),
        &config.policies,
        config.identity.clone(),
        IdentityKey::from_bytes([7; 32]),
        deciders,
        &Metrics::new(),
    );
    (gate, control)
}
