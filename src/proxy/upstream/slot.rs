//! A backend's slot: the index of its address in its pool, carried in pingora's backend
//! extensions, so health checks and ejections find the pool's record of a backend.

use pingora::lb::Backend as LbBackend;

/// The index of a backend address in its pool.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot(pub(super) usize);

/// The slot of a backend the pool built.
pub(super) fn slot_of(backend: &LbBackend) -> Option<usize> {
    backend.ext.get::<Slot>().map(|s| s.0)
}
