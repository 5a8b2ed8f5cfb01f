//! Which backend an allowed request goes to: the pool its route names (routes see the same
//! facts as the policies), then the backend that pool's balance picks. A `hash` pool hashes
//! the caller: the gate's stable caller (the same on each of the caller's requests, whichever
//! policy is the most restrictive; see `gate::Ticket::caller`), or, when no policy decided, the
//! client address (found as the `ip` source finds it).

use super::decide;
use super::upstream::{Attempts, Balance};
use super::Snapshot;
use crate::identity::Identity;
use pingora::prelude::HttpPeer;
use pingora::proxy::Session;
use pingora::Result;
use smallvec::SmallVec;
use std::net::IpAddr;

/// A hash key: 8 bytes of identity digest or an IPv4/IPv6 address.
type Key = SmallVec<[u8; 16]>;

/// The peer of the next attempt of the request in `session` from `client_ip` (resolved once,
/// by the front).
pub(super) fn peer(
    snapshot: &Snapshot,
    session: &Session,
    caller: Option<Identity>,
    client_ip: Option<IpAddr>,
    attempts: &mut Attempts,
) -> Result<Box<HttpPeer>> {
    let upstream = &snapshot.upstream;
    let pool = match attempts.pool() {
        Some(pool) => pool,
        None => pool_of(snapshot, session),
    };
    let key = match upstream.balance(pool) {
        Balance::Hash => caller_key(caller, client_ip),
        Balance::RoundRobin => Key::new(),
    };
    upstream.peer(attempts, pool, &key)
}

/// The pool (its index in the snapshot) the request in `session` goes to: its route's.
pub(super) fn pool_of(snapshot: &Snapshot, session: &Session) -> usize {
    let upstream = &snapshot.upstream;
    if !upstream.has_routes() {
        return 0;
    }
    let req = session.req_header();
    let host = decide::host(req, upstream.needs_host());
    upstream.route(&decide::route_facts(req, host.as_deref()))
}

/// What a hash pool hashes for this request: the gate's stable caller, else the client's
/// address.
fn caller_key(caller: Option<Identity>, client_ip: Option<IpAddr>) -> Key {
    if let Some(caller) = caller {
        return Key::from_slice(&caller.prefix_u64().to_le_bytes());
    }
    match client_ip {
        Some(IpAddr::V4(ip)) => Key::from_slice(&ip.octets()),
        Some(IpAddr::V6(ip)) => Key::from_slice(&ip.octets()),
        // No address (not a TCP client): every such request hashes alike.
        None => Key::new(),
    }
}
