//! The fingerprints of the open HTTP/2 connections, where their requests find them. Pingora
//! hands a request of an HTTP/2 connection only the connection's [`Digest`], made when the
//! connection began (before its first HEADERS frame), so a fingerprint cannot ride in it: it
//! is kept here instead, keyed by the address of the connection's `SocketDigest` (shared by
//! the stream and every request's digest, and held by the entry's guard, so the address names
//! one connection for as long as anyone can ask). The entry goes when the connection's stream
//! drops. One map for the process, as the connections are the process's: a connection writes
//! it twice (registered, gone), a request reads it (concurrently with other readers), and only
//! an HTTP/2 request while some connection is registered.

use super::frames::Reading;
use crate::identity::{H2Fp, H2fpDeclined};
use parking_lot::RwLock;
use pingora::protocols::{Digest, SocketDigest};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};

/// The fingerprints, by connection.
static FINGERPRINTS: LazyLock<RwLock<HashMap<usize, Reading>>> =
    LazyLock::new(|| RwLock::new(HashMap::new()));
/// How many connections are registered (read without the lock).
static REGISTERED: AtomicUsize = AtomicUsize::new(0);

/// A connection's fingerprint, registered until this drops.
#[derive(Debug)]
pub(super) struct Registered {
    /// Held so that its address names this connection while the entry stands.
    socket: Arc<SocketDigest>,
}

/// The key of the connection whose socket digest is `socket`.
fn key(socket: &Arc<SocketDigest>) -> usize {
    Arc::as_ptr(socket) as usize
}

/// Registers `reading` (the fingerprint, or why it was declined) for the connection whose
/// socket digest is `socket`.
pub(super) fn register(socket: Arc<SocketDigest>, reading: Reading) -> Registered {
    let mut map = FINGERPRINTS.write();
    if map.insert(key(&socket), reading).is_none() {
        REGISTERED.fetch_add(1, Ordering::Relaxed);
    }
    Registered { socket }
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut map = FINGERPRINTS.write();
        if map.remove(&key(&self.socket)).is_some() {
            REGISTERED.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// The HTTP/2 fingerprint of the connection `digest` describes, when Floodgate's listener
/// read one for it, or why it declined to.
pub fn connection_h2fp(digest: Option<&Digest>) -> Option<Result<H2Fp, H2fpDeclined>> {
    if REGISTERED.load(Ordering::Relaxed) == 0 {
        return None;
    }
    let socket = digest?.socket_digest.as_ref()?;
    FINGERPRINTS.read().get(&key(socket)).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest_of(socket: &Arc<SocketDigest>) -> Digest {
        Digest {
            socket_digest: Some(socket.clone()),
            ..Digest::default()
        }
    }

    #[test]
    fn a_request_finds_its_own_connections_fingerprint_until_the_connection_goes() {
        let (one, two) = (
            Arc::new(SocketDigest::from_raw_fd(0)),
            Arc::new(SocketDigest::from_raw_fd(0)),
        );
        let chrome: H2Fp = "1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p"
            .parse()
            .unwrap();
        let registered = register(one.clone(), Ok(chrome.clone()));
        assert_eq!(connection_h2fp(Some(&digest_of(&one))), Some(Ok(chrome)));
        assert_eq!(connection_h2fp(Some(&digest_of(&two))), None);
        assert_eq!(connection_h2fp(Some(&Digest::default())), None);
        assert_eq!(connection_h2fp(None), None);
        drop(registered);
        assert_eq!(connection_h2fp(Some(&digest_of(&one))), None);
        let _declined = register(two.clone(), Err(H2fpDeclined::Frames));
        assert_eq!(
            connection_h2fp(Some(&digest_of(&two))),
            Some(Err(H2fpDeclined::Frames))
        );
    }
}
