//! A page's gzip form (RFC 1952) without compressing per request: each static part of a
//! template is deflated once, on its own (RFC 1951: no reference outside itself, ending on a
//! byte boundary with a sync flush), and a request's values go between them as stored blocks.
//! Only the CRC-32 runs over the whole page per request.

use std::io::Write as _;

use flate2::write::DeflateEncoder;
use flate2::Compression;

/// The gzip header: deflate, no name, no time, unknown OS.
const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
/// An empty final block (fixed Huffman codes, just the end-of-block code): the end of the data.
const LAST_BLOCK: [u8; 2] = [0x03, 0x00];
/// The longest stored block.
const MAX_STORED: usize = u16::MAX as usize;
/// A stored block's head: one byte (not final, type 0, padding), `LEN` and `NLEN`.
const STORED_HEAD: usize = 5;

/// `text` deflated on its own, ending byte-aligned and not final, so that anything may follow.
pub(super) fn deflate_alone(text: &[u8]) -> Box<[u8]> {
    let mut encoder = DeflateEncoder::new(Vec::new(), Compression::best());
    // Writing to a Vec cannot fail.
    encoder.write_all(text).expect("deflate into memory");
    encoder.flush().expect("deflate into memory");
    std::mem::take(encoder.get_mut()).into_boxed_slice()
}

/// How many bytes `len` bytes of a value take as stored blocks.
pub(super) fn stored_len(len: usize) -> usize {
    len + len.div_ceil(MAX_STORED).max(1) * STORED_HEAD
}

/// The bytes around a page's parts: the header before them, the last block and trailer after.
pub(super) const FRAME_LEN: usize = HEADER.len() + LAST_BLOCK.len() + 8;

/// A gzip member being written: the header, then parts and values in order, then
/// [`finish`](Member::finish).
pub(super) struct Member {
    out: Vec<u8>,
    crc: crc32fast::Hasher,
    len: u32,
}

impl Member {
    /// A member of exactly `capacity` bytes (from [`FRAME_LEN`], the parts' deflated lengths
    /// and [`stored_len`] of each value).
    pub(super) fn with_capacity(capacity: usize) -> Self {
        let mut out = Vec::with_capacity(capacity);
        out.extend_from_slice(&HEADER);
        Self {
            out,
            crc: crc32fast::Hasher::new(),
            len: 0,
        }
    }

    /// A static part: `text`, already deflated as `deflated` by [`deflate_alone`].
    pub(super) fn part(&mut self, text: &[u8], deflated: &[u8]) {
        self.out.extend_from_slice(deflated);
        self.took_crc(text);
    }

    /// A value, as stored blocks: `write` appends its bytes, `len` of them.
    pub(super) fn value(&mut self, len: usize, write: impl FnOnce(&mut Vec<u8>)) {
        if len > MAX_STORED {
            let mut bytes = Vec::with_capacity(len);
            write(&mut bytes);
            for chunk in bytes.chunks(MAX_STORED) {
                self.stored_head(chunk.len());
                self.out.extend_from_slice(chunk);
            }
            self.took_crc(&bytes);
            return;
        }
        self.stored_head(len);
        let start = self.out.len();
        write(&mut self.out);
        debug_assert_eq!(self.out.len() - start, len);
        self.crc.update(&self.out[start..]);
        self.len = self.len.wrapping_add(len as u32);
    }

    /// A stored block's head, for `len` (at most [`MAX_STORED`]) bytes.
    fn stored_head(&mut self, len: usize) {
        let len = len as u16;
        self.out.push(0);
        self.out.extend_from_slice(&len.to_le_bytes());
        self.out.extend_from_slice(&(!len).to_le_bytes());
    }

    /// Counts `text` into the CRC-32 and the length.
    fn took_crc(&mut self, text: &[u8]) {
        self.crc.update(text);
        self.len = self.len.wrapping_add(text.len() as u32);
    }

    /// The member: the last block, the CRC-32 and the length of what it holds.
    pub(super) fn finish(mut self) -> Vec<u8> {
        self.out.extend_from_slice(&LAST_BLOCK);
        self.out
            .extend_from_slice(&self.crc.finalize().to_le_bytes());
        self.out.extend_from_slice(&self.len.to_le_bytes());
        self.out
    }
}
