//! What the proxy saw of a request's connection, for the gate's facts: whether its peer is a
//! trusted proxy, the JA4 of the TLS connection, read by Floodgate's own listener
//! (`crate::tls`), and the HTTP/2 fingerprint of an HTTP/2 one. What a trusted proxy says of
//! the JA4 (`identity.ja4_header`) outranks the connection's, as at the decision endpoint
//! (`gate::HttpFacts`).

use crate::gate::Seen;
use crate::identity::Client;
use crate::tls::connection_ja4;
use pingora::proxy::Session;

/// What `session`'s connection from `client` showed.
pub(super) fn seen(session: &Session, client: &Client) -> Seen {
    let h2fp = match session.is_http2() {
        true => super::h2fp::connection_h2fp(session.digest()),
        false => None,
    };
    Seen {
        trusted_peer: client.trusted_peer,
        ja4: connection_ja4(session.digest()),
        h2fp,
    }
}
