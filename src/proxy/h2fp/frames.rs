//! The frames an HTTP/2 client sends first, read incrementally as they pass (any split of the
//! bytes into reads gives the same result): the connection preface, then every frame up to the
//! end of the first header block (HEADERS and its CONTINUATIONs, up to `END_HEADERS`), which
//! is when the connection's first request is whole. Only frame headers are looked at for that:
//! payloads are skipped unread.
//!
//! When asked for the fingerprint, the reader also keeps the parts it needs, each capped: the
//! first [`MAX_SETTINGS`] entries of the first SETTINGS frame that is not an ACK, the first
//! connection-level WINDOW_UPDATE, the first [`MAX_PRIORITIES`] PRIORITY frames and the first
//! [`MAX_BLOCK_BYTES`] of the header block. It declines the fingerprint
//! ([`H2fpDeclined`]) when the first header block has not ended within [`MAX_LOOKED_AT`] bytes
//! or [`MAX_FRAMES`] frames, or its HEADERS frame does not hold together; it goes on walking
//! the frames to the end of the block all the same.

use super::parts::{priority, settings, Seen, MAX_BLOCK_BYTES, MAX_PRIORITIES, MAX_SETTINGS};
use crate::identity::{H2Fp, H2fpDeclined};

/// The HTTP/2 connection preface (RFC 9113 §3.4).
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// The most bytes looked at for the fingerprint before the first header block ends.
pub(super) const MAX_LOOKED_AT: usize = 64 * 1024;
/// The most frames looked at for the fingerprint before the first header block ends.
pub(super) const MAX_FRAMES: usize = 1024;

const HEADERS: u8 = 0x1;
const PRIORITY: u8 = 0x2;
const SETTINGS: u8 = 0x4;
const WINDOW_UPDATE: u8 = 0x8;
const CONTINUATION: u8 = 0x9;
const FLAG_ACK: u8 = 0x1;
const FLAG_END_HEADERS: u8 = 0x4;
const FLAG_PADDED: u8 = 0x8;
const FLAG_PRIORITY: u8 = 0x20;

/// Where the reader stands.
#[derive(Debug)]
enum Phase {
    /// Within the connection preface, this many bytes of it seen.
    Preface(usize),
    /// Within a frame's 9-byte header, this many bytes of it seen.
    Head(usize),
    /// Within a frame's payload: its first `want` bytes are kept, the next `skip` passed over.
    Payload { want: usize, skip: usize },
}

/// A frame's 9-byte header, read.
#[derive(Debug, Clone, Copy)]
struct FrameHead {
    len: usize,
    kind: u8,
    flags: u8,
    stream: u32,
}

impl FrameHead {
    fn read(bytes: &[u8; 9]) -> Self {
        Self {
            len: usize::from(bytes[0]) << 16 | usize::from(bytes[1]) << 8 | usize::from(bytes[2]),
            kind: bytes[3],
            flags: bytes[4],
            stream: u32::from_be_bytes([bytes[5], bytes[6], bytes[7], bytes[8]]) & 0x7fff_ffff,
        }
    }

    fn ends_block(&self) -> bool {
        self.flags & FLAG_END_HEADERS != 0
    }
}

/// What a read gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Progress {
    /// The first header block has not ended yet: more bytes are wanted.
    Reading,
    /// The first header block ended: the connection's first request is whole.
    FirstRequest,
    /// The bytes are not HTTP/2.
    NotHttp2,
}

/// What became of the fingerprint.
pub(super) type Reading = Result<H2Fp, H2fpDeclined>;

/// Reads a client's first HTTP/2 frames, a read at a time.
#[derive(Debug)]
pub(super) struct FrameReader {
    phase: Phase,
    /// The header of the frame under way.
    head: [u8; 9],
    frame: Option<FrameHead>,
    /// The kept bytes of the frame under way.
    kept: Vec<u8>,
    looked_at: usize,
    frames: usize,
    /// Whether the first header block has begun (its HEADERS frame came).
    in_block: bool,
    /// What the fingerprint keeps, while it is being read.
    seen: Option<Box<Seen>>,
    /// The fingerprint or why it was declined, once known and until taken.
    reading: Option<Reading>,
}

impl FrameReader {
    /// A reader expecting the connection preface, keeping what the fingerprint needs when
    /// `fingerprint`.
    pub(super) fn new(fingerprint: bool) -> Self {
        Self {
            phase: Phase::Preface(0),
            head: [0; 9],
            frame: None,
            kept: Vec::new(),
            looked_at: 0,
            frames: 0,
            in_block: false,
            seen: fingerprint.then(Box::default),
            reading: None,
        }
    }

    /// The fingerprint, or why it was declined, once it is known (once).
    pub(super) fn take_reading(&mut self) -> Option<Reading> {
        self.reading.take()
    }

    /// Looks at `bytes`, the next ones the client sent.
    pub(super) fn read(&mut self, mut bytes: &[u8]) -> Progress {
        while !bytes.is_empty() {
            let room = match self.seen {
                Some(_) => MAX_LOOKED_AT - self.looked_at,
                None => bytes.len(),
            };
            // Every step uses at least one byte.
            match self.step(&bytes[..bytes.len().min(room)]) {
                Step::Used(n) => {
                    self.looked_at = self.looked_at.saturating_add(n);
                    bytes = &bytes[n..];
                }
                Step::Finished(progress) => return progress,
            }
            if self.seen.is_some() && self.looked_at >= MAX_LOOKED_AT {
                self.decline(H2fpDeclined::Bytes);
            }
        }
        Progress::Reading
    }

    /// Stops keeping parts: the fingerprint is declined for `why`.
    fn decline(&mut self, why: H2fpDeclined) {
        if self.seen.take().is_some() {
            self.reading = Some(Err(why));
        }
    }

    /// Takes what the phase under way wants of `bytes` (not empty).
    fn step(&mut self, bytes: &[u8]) -> Step {
        match self.phase {
            Phase::Preface(seen) => {
                let n = bytes.len().min(PREFACE.len() - seen);
                if bytes[..n] != PREFACE[seen..seen + n] {
                    self.seen = None;
                    return Step::Finished(Progress::NotHttp2);
                }
                self.phase = match seen + n == PREFACE.len() {
                    true => Phase::Head(0),
                    false => Phase::Preface(seen + n),
                };
                Step::Used(n)
            }
            Phase::Head(seen) => {
                let n = bytes.len().min(9 - seen);
                self.head[seen..seen + n].copy_from_slice(&bytes[..n]);
                if seen + n < 9 {
                    self.phase = Phase::Head(seen + n);
                    return Step::Used(n);
                }
                match self.frame_began(FrameHead::read(&self.head)) {
                    Some(progress) => Step::Finished(progress),
                    None => Step::Used(n),
                }
            }
            Phase::Payload { want, skip } => {
                let kept = bytes.len().min(want);
                self.kept.extend_from_slice(&bytes[..kept]);
                let skipped = (bytes.len() - kept).min(skip);
                self.phase = Phase::Payload {
                    want: want - kept,
                    skip: skip - skipped,
                };
                if want - kept == 0 && skip - skipped == 0 {
                    if let Some(progress) = self.frame_ended() {
                        return Step::Finished(progress);
                    }
                }
                Step::Used(kept + skipped)
            }
        }
    }

    /// Starts on the frame `head` announces; the end of the reading if that ends it.
    fn frame_began(&mut self, head: FrameHead) -> Option<Progress> {
        self.frames += 1;
        if self.frames > MAX_FRAMES {
            self.decline(H2fpDeclined::Frames);
        }
        let want = head.len.min(self.wanted(&head));
        self.frame = Some(head);
        self.kept.clear();
        self.phase = Phase::Payload {
            want,
            skip: head.len - want,
        };
        match head.len {
            0 => self.frame_ended(),
            _ => None,
        }
    }

    /// How many of the first payload bytes of the frame `head` announces are kept.
    fn wanted(&self, head: &FrameHead) -> usize {
        let Some(seen) = &self.seen else {
            return 0;
        };
        let block_room = |block: &Option<Vec<u8>>| {
            MAX_BLOCK_BYTES.saturating_sub(block.as_ref().map_or(0, Vec::len))
        };
        match head.kind {
            SETTINGS if head.flags & FLAG_ACK == 0 && seen.settings.is_none() => MAX_SETTINGS * 6,
            WINDOW_UPDATE if head.stream == 0 && seen.window_update.is_none() => 4,
            PRIORITY if seen.priorities.len() < MAX_PRIORITIES => 5,
            // Padding length and priority fields first, then the block.
            HEADERS if seen.block.is_none() => 6 + MAX_BLOCK_BYTES,
            CONTINUATION if seen.block.is_some() => block_room(&seen.block),
            _ => 0,
        }
    }

    /// Takes what the fingerprint needs of the frame whose payload was just passed; the end
    /// of the reading if the first header block ended.
    fn frame_ended(&mut self) -> Option<Progress> {
        let head = self.frame.take()?;
        self.phase = Phase::Head(0);
        let kept = std::mem::take(&mut self.kept);
        match head.kind {
            HEADERS if !self.in_block => {
                self.in_block = true;
                self.keep_block(|_| header_block(&head, &kept).map(<[u8]>::to_vec));
                return self.block_went_on(&head);
            }
            CONTINUATION if self.in_block => {
                self.keep_block(|block| {
                    let mut block = block.unwrap_or_default();
                    block.extend_from_slice(&kept);
                    Some(block)
                });
                return self.block_went_on(&head);
            }
            _ => {}
        }
        if let Some(seen) = &mut self.seen {
            match head.kind {
                SETTINGS if head.flags & FLAG_ACK == 0 && seen.settings.is_none() => {
                    seen.settings = Some(settings(&kept));
                }
                WINDOW_UPDATE if kept.len() == 4 => {
                    let increment = u32::from_be_bytes([kept[0], kept[1], kept[2], kept[3]]);
                    seen.window_update = Some(increment & 0x7fff_ffff);
                }
                PRIORITY if kept.len() == 5 => seen.priorities.push(priority(head.stream, &kept)),
                _ => {}
            }
        }
        self.kept = kept;
        None
    }

    /// Sets the header block kept to what `grow` makes of it; declines the fingerprint if
    /// that is nothing (a HEADERS frame that does not hold together).
    fn keep_block(&mut self, grow: impl FnOnce(Option<Vec<u8>>) -> Option<Vec<u8>>) {
        let Some(seen) = &mut self.seen else {
            return;
        };
        match grow(seen.block.take()) {
            Some(block) => seen.block = Some(block),
            None => self.decline(H2fpDeclined::Malformed),
        }
    }

    /// Once the frame `head` ended the first header block or filled the bytes decoded of it,
    /// the fingerprint is known; the first request is whole once the block ended.
    fn block_went_on(&mut self, head: &FrameHead) -> Option<Progress> {
        let filled = self
            .seen
            .as_ref()
            .and_then(|seen| seen.block.as_ref())
            .is_some_and(|b| b.len() >= MAX_BLOCK_BYTES);
        if head.ends_block() || filled {
            if let Some(seen) = self.seen.take() {
                self.reading = Some(seen.fingerprint().ok_or(H2fpDeclined::Malformed));
            }
        }
        head.ends_block().then_some(Progress::FirstRequest)
    }
}

/// How far a step went.
enum Step {
    /// It used this many bytes.
    Used(usize),
    /// The reading is over.
    Finished(Progress),
}

/// The header block fragment of a HEADERS frame whose payload's first bytes are `kept`: past
/// the padding length and priority fields, short of the padding. `None` when the fields
/// announced do not fit the frame.
fn header_block<'k>(head: &FrameHead, kept: &'k [u8]) -> Option<&'k [u8]> {
    let mut start = 0;
    let mut padding = 0;
    if head.flags & FLAG_PADDED != 0 {
        padding = usize::from(*kept.first()?);
        start = 1;
    }
    if head.flags & FLAG_PRIORITY != 0 {
        start += 5;
    }
    let end = head.len.checked_sub(padding)?;
    if start > end {
        return None;
    }
    Some(&kept[start.min(kept.len())..end.min(kept.len())])
}
