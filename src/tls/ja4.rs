//! JA4, the fingerprint of a TLS client's ClientHello, as FoxIO specifies it
//! (technical_details/JA4.md; JA4 alone is BSD-3-licensed, and nothing else of JA4+ is
//! implemented here): `t13d1516h2_8daaf6152771_e5627efa2ab1` is the protocol (`t`, TLS over
//! TCP), the highest TLS version offered, `d` with SNI (`i` without), the counts of cipher
//! suites and extensions, the first and last characters of the first ALPN value; then the
//! truncated SHA-256 of the sorted cipher suites; then that of the sorted extensions (less SNI
//! and ALPN) and the signature algorithms in their order. GREASE values are ignored throughout.

use crate::identity::Ja4;
use sha2::{Digest, Sha256};
use std::fmt::Write;
use tls_parser::{
    parse_tls_client_hello_extensions, parse_tls_message_handshake, TlsClientHelloContents,
    TlsExtension, TlsExtensionType, TlsMessage, TlsMessageHandshake,
};

/// The JA4 of `hello`, a ClientHello handshake message (type, length, body: see
/// [`scan`](super::scan)); `None` if it is not one that parses.
pub fn ja4(hello: &[u8]) -> Option<Ja4> {
    let (_, message) = parse_tls_message_handshake(hello).ok()?;
    let TlsMessage::Handshake(TlsMessageHandshake::ClientHello(hello)) = message else {
        return None;
    };
    let (rest, extensions) = parse_tls_client_hello_extensions(hello.ext.unwrap_or(&[])).ok()?;
    if !rest.is_empty() {
        return None;
    }
    Hello::new(&hello, &extensions).ja4().parse().ok()
}

/// What JA4 reads of a ClientHello, GREASE left out.
#[derive(Debug, Default)]
struct Hello<'h> {
    /// The highest version offered.
    version: u16,
    sni: bool,
    ciphers: Vec<u16>,
    extensions: Vec<u16>,
    alpn: Option<&'h [u8]>,
    signature_algorithms: Vec<u16>,
}

impl<'h> Hello<'h> {
    fn new(hello: &TlsClientHelloContents<'h>, extensions: &[TlsExtension<'h>]) -> Self {
        let mut seen = Self {
            version: hello.version.0,
            ciphers: hello
                .ciphers
                .iter()
                .map(|c| c.0)
                .filter(not_grease)
                .collect(),
            ..Self::default()
        };
        for extension in extensions {
            seen.note(extension);
        }
        seen
    }

    /// Notes one extension.
    fn note(&mut self, extension: &TlsExtension<'h>) {
        match extension {
            TlsExtension::Grease(..) => return,
            TlsExtension::SNI(_) => self.sni = true,
            TlsExtension::ALPN(names) => self.alpn = names.first().copied(),
            TlsExtension::SignatureAlgorithms(algorithms) => {
                self.signature_algorithms = algorithms.iter().copied().filter(not_grease).collect();
            }
            TlsExtension::SupportedVersions(versions) => {
                let highest = versions.iter().map(|v| v.0).filter(not_grease).max();
                self.version = highest.unwrap_or(0);
            }
            _ => {}
        }
        self.extensions.push(TlsExtensionType::from(extension).0);
    }

    /// The fingerprint, as text.
    fn ja4(&self) -> String {
        let mut sorted: Vec<u16> = self
            .extensions
            .iter()
            .copied()
            .filter(|&e| e != 0 && e != 16)
            .collect();
        sorted.sort_unstable();
        let mut ciphers = self.ciphers.clone();
        ciphers.sort_unstable();
        let mut hashed = hex_list(&sorted);
        if !self.signature_algorithms.is_empty() {
            hashed.push('_');
            hashed.push_str(&hex_list(&self.signature_algorithms));
        }
        format!(
            "t{}{}{:02}{:02}{}_{}_{}",
            version(self.version),
            if self.sni { 'd' } else { 'i' },
            self.ciphers.len().min(99),
            self.extensions.len().min(99),
            alpn(self.alpn),
            hash12(&hex_list(&ciphers)),
            // No extension but SNI and ALPN: zeros, whatever the signature algorithms.
            if sorted.is_empty() {
                hash12("")
            } else {
                hash12(&hashed)
            },
        )
    }
}

/// Whether `value` is not a GREASE value (RFC 8701: `0x?a?a`, both bytes alike).
fn not_grease(value: &u16) -> bool {
    let [high, low] = value.to_be_bytes();
    !(high == low && low & 0x0f == 0x0a)
}

/// The two characters of a TLS version.
fn version(version: u16) -> &'static str {
    match version {
        0x0304 => "13",
        0x0303 => "12",
        0x0302 => "11",
        0x0301 => "10",
        0x0300 => "s3",
        0x0002 => "s2",
        _ => "00",
    }
}

/// The first and last characters of the first ALPN value: `00` if none; their hex digits
/// (the first of the first byte, the last of the last) unless both are ASCII alphanumeric.
fn alpn(first: Option<&[u8]>) -> String {
    let (Some(&a), Some(&z)) = (first.and_then(|v| v.first()), first.and_then(|v| v.last())) else {
        return "00".to_owned();
    };
    match a.is_ascii_alphanumeric() && z.is_ascii_alphanumeric() {
        true => [char::from(a), char::from(z)].iter().collect(),
        false => {
            let (a, z) = (format!("{a:02x}"), format!("{z:02x}"));
            [a.as_bytes()[0], z.as_bytes()[1]]
                .iter()
                .map(|&b| char::from(b))
                .collect()
        }
    }
}

/// `values` as 4-digit lower-case hex, comma-separated.
fn hex_list(values: &[u16]) -> String {
    let mut list = String::with_capacity(values.len() * 5);
    for (i, value) in values.iter().enumerate() {
        let comma = if i == 0 { "" } else { "," };
        let _ = write!(list, "{comma}{value:04x}");
    }
    list
}

/// The first 12 hex digits of the SHA-256 of `text`; 12 zeros for no text.
fn hash12(text: &str) -> String {
    if text.is_empty() {
        return "000000000000".to_owned();
    }
    let digest = Sha256::digest(text.as_bytes());
    digest[..6]
        .iter()
        .fold(String::with_capacity(12), |mut hex, b| {
            let _ = write!(hex, "{b:02x}");
            hex
        })
}

#[cfg(test)]
mod tests;
