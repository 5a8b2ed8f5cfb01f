//! The JA4 of a request: what a trusted proxy says of it (`identity.ja4_header`), else that
//! of the TLS connection it came on, read by Floodgate's own listener (`crate::tls`).

use crate::identity::{Client, ClientIpResolver, Ja4};
use crate::tls::connection_ja4;
use pingora::proxy::Session;

/// The JA4 of `session`'s request from `client`, whose forwarding headers `client_ip`
/// believes if its peer is a trusted proxy.
pub(super) fn request_ja4(
    client_ip: &ClientIpResolver,
    session: &Session,
    client: &Client,
) -> Option<Ja4> {
    let headers = &session.req_header().headers;
    match client_ip.forwarded_ja4_from(client.trusted_peer, headers) {
        Some(forwarded) => forwarded,
        None => connection_ja4(session.digest()),
    }
}
