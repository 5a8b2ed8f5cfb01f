//! TLS on Floodgate's own listener: the ClientHello read before the handshake (`hello`), its
//! JA4 fingerprint (`ja4`) and what it asks for (`offer`), the certificates served by name
//! (`served`, `certified`), ACME TLS-ALPN-01 validations (`validation`), and the handshake
//! that keeps the JA4 for the connection's requests (`front`).

mod certified;
mod front;
mod hello;
mod ja4;
mod offer;
mod served;
mod validation;

pub use certified::{CertError, Certified};
pub use front::{connection_ja4, TlsFront, TlsFrontError};
pub use hello::{scan, Scan, MAX_HELLO_BYTES};
pub use ja4::ja4;
pub use offer::{offer, Offer, ACME_TLS_ALPN};
pub use served::ServedCertificates;
pub use validation::Validations;
