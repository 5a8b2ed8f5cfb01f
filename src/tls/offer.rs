//! What a ClientHello asks for before any certificate is chosen: the name (SNI) and the
//! application protocols (ALPN). The listener reads them to answer an ACME TLS-ALPN-01
//! validation (RFC 8737), which offers `acme-tls/1` alone.

use tls_parser::{
    parse_tls_client_hello_extensions, parse_tls_message_handshake, SNIType, TlsExtension,
    TlsMessage, TlsMessageHandshake,
};

/// The ALPN protocol of an ACME TLS-ALPN-01 validation.
pub const ACME_TLS_ALPN: &[u8] = b"acme-tls/1";

/// The name and protocols a ClientHello offers.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Offer {
    /// The host name asked for, lowercased, if any.
    pub name: Option<String>,
    /// The ALPN protocols offered, in the client's order.
    pub protocols: Vec<Vec<u8>>,
}

impl Offer {
    /// Whether this is an ACME TLS-ALPN-01 validation: `acme-tls/1` is the only protocol.
    pub fn is_acme_validation(&self) -> bool {
        matches!(self.protocols.as_slice(), [only] if only == ACME_TLS_ALPN)
    }
}

/// The offer of `hello`, a ClientHello handshake message (see [`scan`](super::scan));
/// `None` if it does not parse.
pub fn offer(hello: &[u8]) -> Option<Offer> {
    let (_, message) = parse_tls_message_handshake(hello).ok()?;
    let TlsMessage::Handshake(TlsMessageHandshake::ClientHello(hello)) = message else {
        return None;
    };
    let (_, extensions) = parse_tls_client_hello_extensions(hello.ext.unwrap_or(&[])).ok()?;
    let mut offer = Offer::default();
    for extension in extensions {
        match extension {
            TlsExtension::SNI(names) => {
                offer.name = names
                    .iter()
                    .find(|(kind, _)| *kind == SNIType::HostName)
                    .and_then(|(_, name)| std::str::from_utf8(name).ok())
                    .map(str::to_ascii_lowercase);
            }
            TlsExtension::ALPN(protocols) => {
                offer.protocols = protocols.iter().map(|p| p.to_vec()).collect();
            }
            _ => {}
        }
    }
    Some(offer)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ClientHello handshake message with `extensions` (type, body) and nothing else of note.
    fn hello(extensions: &[(u16, Vec<u8>)]) -> Vec<u8> {
        let mut ext = Vec::new();
        for (kind, body) in extensions {
            ext.extend(kind.to_be_bytes());
            ext.extend((body.len() as u16).to_be_bytes());
            ext.extend(body);
        }
        let mut body = vec![3, 3];
        body.extend([7u8; 32]); // random
        body.push(0); // session id
        body.extend([0, 2, 0x13, 0x01]); // one cipher suite
        body.extend([1, 0]); // null compression
        body.extend((ext.len() as u16).to_be_bytes());
        body.extend(ext);
        let mut message = vec![1, 0];
        message.extend((body.len() as u16).to_be_bytes());
        message.extend(body);
        message
    }

    fn sni(name: &str) -> (u16, Vec<u8>) {
        let mut entry = vec![0];
        entry.extend((name.len() as u16).to_be_bytes());
        entry.extend(name.as_bytes());
        let mut body = (entry.len() as u16).to_be_bytes().to_vec();
        body.extend(entry);
        (0, body)
    }

    fn alpn(protocols: &[&[u8]]) -> (u16, Vec<u8>) {
        let mut list = Vec::new();
        for p in protocols {
            list.push(p.len() as u8);
            list.extend(*p);
        }
        let mut body = (list.len() as u16).to_be_bytes().to_vec();
        body.extend(list);
        (16, body)
    }

    #[test]
    fn reads_the_name_and_the_protocols() {
        let offer = offer(&hello(&[sni("Shop.Example"), alpn(&[b"h2", b"http/1.1"])])).unwrap();
        assert_eq!(offer.name.as_deref(), Some("shop.example"));
        assert_eq!(offer.protocols, vec![b"h2".to_vec(), b"http/1.1".to_vec()]);
        assert!(!offer.is_acme_validation());
    }

    #[test]
    fn an_acme_validation_offers_acme_tls_alone() {
        let only = offer(&hello(&[sni("a.example"), alpn(&[ACME_TLS_ALPN])])).unwrap();
        assert!(only.is_acme_validation());
        let mixed = offer(&hello(&[alpn(&[ACME_TLS_ALPN, b"h2"])])).unwrap();
        assert!(!mixed.is_acme_validation());
        assert_eq!(offer(&hello(&[])).unwrap(), Offer::default());
    }

    #[test]
    fn garbage_is_no_offer() {
        assert_eq!(offer(b"\x16\x03\x01garbage"), None);
    }
}
