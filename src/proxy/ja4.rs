//! The JA4 of a request: what a trusted proxy says of it (`identity.ja4_header`), else that
//! of the TLS connection it came on, read by Floodgate's own listener (`crate::tls`).

use crate::identity::{ClientIpResolver, Ja4};
use crate::tls::connection_ja4;
use pingora::proxy::Session;
use std::net::IpAddr;

/// The JA4 of `session`'s request from the TCP peer `peer`, whose forwarding headers
/// `client_ip` trusts or not.
pub(super) fn request_ja4(
    client_ip: &ClientIpResolver,
    session: &Session,
    peer: Option<IpAddr>,
) -> Option<Ja4> {
    match client_ip.forwarded_ja4(peer, &session.req_header().headers) {
        Some(forwarded) => forwarded,
        None => connection_ja4(session.digest()),
    }
}
