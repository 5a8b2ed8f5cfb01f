//! The JA4 of a request: what a trusted proxy says of it (`identity.ja4_header`), else that
//! of the TLS connection it came on, read by Floodgate's own listener (`crate::tls`).

use crate::identity::{ClientIpResolver, Ja4};
use crate::tls::connection_ja4;
use pingora::proxy::Session;

/// The JA4 of `session`'s request, its client address resolved by `client_ip`.
pub(super) fn request_ja4(client_ip: &ClientIpResolver, session: &Session) -> Option<Ja4> {
    let peer = super::decide::peer_ip(session);
    match client_ip.forwarded_ja4(peer, &session.req_header().headers) {
        Some(forwarded) => forwarded,
        None => connection_ja4(session.digest()),
    }
}
