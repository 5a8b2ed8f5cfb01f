//! What the fingerprint keeps of a client's first frames (each part capped), and the
//! fingerprint they make in Akamai's format.

use super::pseudo::pseudo_order;
use crate::identity::H2Fp;
use std::fmt::Write;

/// The most SETTINGS entries kept (clients send 2 to 8; ids 1 to 9 are defined).
pub(super) const MAX_SETTINGS: usize = 12;
/// The most PRIORITY frames kept (old Firefox sent 6 before its first request).
pub(super) const MAX_PRIORITIES: usize = 8;
/// The most bytes of the first header block decoded for its pseudo-headers, which come first.
pub(super) const MAX_BLOCK_BYTES: usize = 4096;

/// A PRIORITY frame: its stream, whether exclusive, the stream it depends on, and its weight
/// (1 to 256: the wire value plus one, as Akamai writes it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Priority {
    stream: u32,
    exclusive: bool,
    depends_on: u32,
    weight: u16,
}

/// The parts of the first frames kept so far.
#[derive(Debug, Default)]
pub(super) struct Seen {
    /// The first [`MAX_SETTINGS`] entries of the first SETTINGS frame that is not an ACK.
    pub(super) settings: Option<Vec<(u16, u32)>>,
    /// The increment of the first WINDOW_UPDATE on stream 0.
    pub(super) window_update: Option<u32>,
    /// The first [`MAX_PRIORITIES`] PRIORITY frames.
    pub(super) priorities: Vec<Priority>,
    /// The first header block (its first bytes), once its HEADERS frame came.
    pub(super) block: Option<Vec<u8>>,
}

impl Seen {
    /// The fingerprint of what was seen; `None` if it is not one (it always is).
    pub(super) fn fingerprint(&self) -> Option<H2Fp> {
        let mut text = String::with_capacity(128);
        for (i, (id, value)) in self.settings.iter().flatten().enumerate() {
            let sep = if i > 0 { ";" } else { "" };
            let _ = write!(text, "{sep}{id}:{value}");
        }
        match self.window_update {
            Some(increment) => {
                let _ = write!(text, "|{increment}|");
            }
            None => text.push_str("|00|"),
        }
        if self.priorities.is_empty() {
            text.push('0');
        }
        for (i, p) in self.priorities.iter().enumerate() {
            let sep = if i > 0 { "," } else { "" };
            let exclusive = u8::from(p.exclusive);
            let _ = write!(
                text,
                "{sep}{}:{exclusive}:{}:{}",
                p.stream, p.depends_on, p.weight
            );
        }
        text.push('|');
        text.push_str(&pseudo_order(self.block.as_deref().unwrap_or_default()));
        text.parse().ok()
    }
}

/// The entries of a SETTINGS payload's first bytes (`kept`), in order.
pub(super) fn settings(kept: &[u8]) -> Vec<(u16, u32)> {
    kept.chunks_exact(6)
        .map(|e| {
            let id = u16::from_be_bytes([e[0], e[1]]);
            (id, u32::from_be_bytes([e[2], e[3], e[4], e[5]]))
        })
        .collect()
}

/// The PRIORITY frame of `stream` whose payload is `kept` (5 bytes).
pub(super) fn priority(stream: u32, kept: &[u8]) -> Priority {
    let dependency = u32::from_be_bytes([kept[0], kept[1], kept[2], kept[3]]);
    Priority {
        stream,
        exclusive: dependency & 0x8000_0000 != 0,
        depends_on: dependency & 0x7fff_ffff,
        weight: u16::from(kept[4]) + 1,
    }
}
