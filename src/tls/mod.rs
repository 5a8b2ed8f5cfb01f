//! TLS on Floodgate's own listener: the ClientHello read before the handshake (`hello`), its
//! JA4 fingerprint (`ja4`), and the handshake that keeps it for the connection's requests
//! (`front`).

mod front;
mod hello;
mod ja4;

pub use front::{connection_ja4, TlsFront, TlsFrontError};

pub use hello::{scan, Scan, MAX_HELLO_BYTES};
pub use ja4::ja4;
