//! The frame reader against frames made here: published clients' first frames, every split of
//! them into reads, the caps (past which the fingerprint is declined and the first request
//! still found), and bytes that are not HTTP/2.

use super::frames::{FrameReader, Progress, Reading, MAX_FRAMES};
use super::parts::{MAX_PRIORITIES, MAX_SETTINGS};
use crate::identity::{H2fpDeclined, MAX_H2FP_LEN};

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut out = len.to_be_bytes()[1..].to_vec();
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

fn settings(entries: &[(u16, u32)]) -> Vec<u8> {
    let payload: Vec<u8> = entries
        .iter()
        .flat_map(|(id, value)| [&id.to_be_bytes()[..], &value.to_be_bytes()[..]].concat())
        .collect();
    frame(0x4, 0, 0, &payload)
}

fn window_update(stream: u32, increment: u32) -> Vec<u8> {
    frame(0x8, 0, stream, &increment.to_be_bytes())
}

fn priority(stream: u32, exclusive: bool, depends_on: u32, wire_weight: u8) -> Vec<u8> {
    let dependency = depends_on | if exclusive { 0x8000_0000 } else { 0 };
    let mut payload = dependency.to_be_bytes().to_vec();
    payload.push(wire_weight);
    frame(0x2, 0, stream, &payload)
}

fn block(names: &[&str]) -> Vec<u8> {
    let values: Vec<(&[u8], &[u8])> = names
        .iter()
        .map(|name| {
            let value: &[u8] = match *name {
                ":method" => b"GET",
                ":scheme" => b"https",
                ":path" => b"/",
                _ => b"example.com",
            };
            (name.as_bytes(), value)
        })
        .chain([(&b"user-agent"[..], &b"test"[..])])
        .collect();
    loona_hpack::Encoder::new().encode(values)
}

/// A HEADERS frame on stream 1 ending the block, with Chrome's priority fields.
fn headers(names: &[&str]) -> Vec<u8> {
    let mut payload = vec![0x80, 0, 0, 0, 255];
    payload.extend_from_slice(&block(names));
    frame(0x1, 0x4 | 0x1 | 0x20, 1, &payload)
}

fn chrome() -> Vec<u8> {
    [
        PREFACE.to_vec(),
        settings(&[(1, 65536), (2, 0), (4, 6291456), (6, 262144)]),
        window_update(0, 15663105),
        headers(&[":method", ":authority", ":scheme", ":path"]),
    ]
    .concat()
}

const CHROME: &str = "1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p";

/// What a reader fingerprinting makes of `bytes`: its progress, and the fingerprint (or why it
/// was declined) if known.
fn read_whole(bytes: &[u8]) -> (Progress, Option<Reading>) {
    let mut reader = FrameReader::new(true);
    let progress = reader.read(bytes);
    (progress, reader.take_reading())
}

fn done(text: &str) -> (Progress, Option<Reading>) {
    (Progress::FirstRequest, Some(Ok(text.parse().unwrap())))
}

fn declined(why: H2fpDeclined) -> (Progress, Option<Reading>) {
    (Progress::FirstRequest, Some(Err(why)))
}

#[test]
fn chromes_first_frames_give_its_published_fingerprint() {
    assert_eq!(read_whole(&chrome()), done(CHROME));
}

#[test]
fn every_split_into_two_reads_and_one_byte_reads_give_the_same() {
    let bytes = chrome();
    for at in 0..=bytes.len() {
        for fingerprint in [true, false] {
            let mut reader = FrameReader::new(fingerprint);
            let first = reader.read(&bytes[..at]);
            let progress = match first {
                Progress::Reading => reader.read(&bytes[at..]),
                finished => finished,
            };
            assert_eq!(progress, Progress::FirstRequest, "split at {at}");
            let expected = fingerprint.then(|| done(CHROME).1).flatten();
            assert_eq!(reader.take_reading(), expected, "split at {at}");
        }
    }
    let mut reader = FrameReader::new(true);
    let mut last = Progress::Reading;
    for byte in &bytes {
        assert_eq!(last, Progress::Reading);
        last = reader.read(std::slice::from_ref(byte));
    }
    assert_eq!((last, reader.take_reading()), done(CHROME));
}

#[test]
fn priority_frames_are_listed_and_other_frames_passed_over() {
    let bytes = [
        PREFACE.to_vec(),
        settings(&[(1, 65536), (4, 131072), (5, 16384)]),
        frame(0x4, 0x1, 0, &[]),
        settings(&[(3, 1)]),
        window_update(3, 99),
        window_update(0, 12517377),
        window_update(0, 5),
        frame(0x6, 0, 0, &[0; 8]),
        priority(3, false, 0, 200),
        priority(5, false, 0, 100),
        priority(9, true, 7, 0),
        headers(&[":method", ":path", ":authority", ":scheme"]),
    ]
    .concat();
    assert_eq!(
        read_whole(&bytes),
        done("1:65536;4:131072;5:16384|12517377|3:0:0:201,5:0:0:101,9:1:7:1|m,p,a,s")
    );
}

#[test]
fn a_client_without_window_update_or_settings_entries_shows_the_placeholders() {
    let bytes = [
        PREFACE.to_vec(),
        settings(&[]),
        headers(&[":method", ":scheme", ":path", ":authority"]),
    ]
    .concat();
    assert_eq!(read_whole(&bytes), done("|00|0|m,s,p,a"));
}

#[test]
fn a_block_over_continuations_and_a_padded_headers_frame_are_read() {
    let whole = block(&[":method", ":authority", ":scheme", ":path"]);
    let (a, b) = whole.split_at(3);
    let bytes = [
        PREFACE.to_vec(),
        settings(&[(2, 0)]),
        frame(0x1, 0, 1, a),
        frame(0x9, 0x4, 1, b),
    ]
    .concat();
    assert_eq!(read_whole(&bytes), done("2:0|00|0|m,a,s,p"));
    let mut padded = vec![4];
    padded.extend_from_slice(&whole);
    padded.extend_from_slice(&[0; 4]);
    let bytes = [
        PREFACE.to_vec(),
        settings(&[]),
        frame(0x1, 0x4 | 0x8, 1, &padded),
    ]
    .concat();
    assert_eq!(read_whole(&bytes), done("|00|0|m,a,s,p"));
}

#[test]
fn hundreds_of_settings_and_priority_frames_are_capped() {
    let entries: Vec<(u16, u32)> = (0..500).map(|i| (i as u16, u32::MAX)).collect();
    let mut bytes = [PREFACE.to_vec(), settings(&entries)].concat();
    for stream in 0..300 {
        bytes.extend(priority(2 * stream + 3, true, 2_000_000_000, 255));
    }
    bytes.extend(window_update(0, 0x7fff_ffff));
    bytes.extend(headers(&[":method", ":authority", ":scheme", ":path"]));
    let (Progress::FirstRequest, Some(Ok(fingerprint))) = read_whole(&bytes) else {
        panic!("no fingerprint");
    };
    let text = fingerprint.as_str();
    assert!(text.len() <= MAX_H2FP_LEN, "{}", text.len());
    let parts: Vec<&str> = text.split('|').collect();
    assert_eq!(parts[0].split(';').count(), MAX_SETTINGS);
    assert_eq!(parts[1], "2147483647");
    assert_eq!(parts[2].split(',').count(), MAX_PRIORITIES);
    assert_eq!(parts[3], "m,a,s,p");
}

#[test]
fn bytes_that_are_not_http2_are_left_and_frames_past_the_caps_decline_the_fingerprint() {
    assert_eq!(
        read_whole(b"GET / HTTP/1.1\r\n\r\n"),
        (Progress::NotHttp2, None)
    );
    let mut reader = FrameReader::new(true);
    assert_eq!(reader.read(&PREFACE[..10]), Progress::Reading);
    assert_eq!(reader.read(b"xx"), Progress::NotHttp2);
    // Padding longer than the frame.
    let bytes = [PREFACE.to_vec(), frame(0x1, 0x4 | 0x8, 1, &[9, 0x82])].concat();
    assert_eq!(read_whole(&bytes), declined(H2fpDeclined::Malformed));
    let request = headers(&[":method", ":authority", ":scheme", ":path"]);
    // Too many frames before a request: PINGs, or empty frames of an unknown type.
    for kind in [0x6, 0xfa] {
        let mut bytes = [PREFACE.to_vec(), settings(&[(1, 4096)])].concat();
        let payload: &[u8] = if kind == 0x6 { &[0; 8] } else { &[] };
        for _ in 0..=MAX_FRAMES {
            bytes.extend(frame(kind, 0, 0, payload));
        }
        bytes.extend(&request);
        assert_eq!(read_whole(&bytes), declined(H2fpDeclined::Frames), "{kind}");
    }
    // Too many bytes before a request: a frame announcing 16 MiB is passed over, not kept.
    let mut reader = FrameReader::new(true);
    let mut bytes = [PREFACE.to_vec(), frame(0x0, 0, 1, &[])].concat();
    bytes[PREFACE.len()..PREFACE.len() + 3].copy_from_slice(&[0xff, 0xff, 0xff]);
    assert_eq!(reader.read(&bytes), Progress::Reading);
    let chunk = vec![0u8; 16 * 1024];
    for _ in 0..4 {
        assert_eq!(reader.read(&chunk), Progress::Reading);
    }
    assert_eq!(reader.take_reading(), Some(Err(H2fpDeclined::Bytes)));
    assert_eq!(reader.take_reading(), None, "told once");
    let rest = vec![0u8; (1 << 24) - 1 - 4 * chunk.len()];
    assert_eq!(reader.read(&rest), Progress::Reading);
    assert_eq!(
        reader.read(&request),
        Progress::FirstRequest,
        "walked to it"
    );
}

#[test]
fn the_first_request_is_whole_only_when_its_header_block_ends() {
    let whole = block(&[":method", ":authority", ":scheme", ":path"]);
    let (a, b) = whole.split_at(3);
    for fingerprint in [true, false] {
        let mut reader = FrameReader::new(fingerprint);
        let start = [PREFACE.to_vec(), settings(&[(2, 0)])].concat();
        assert_eq!(reader.read(&start), Progress::Reading);
        for _ in 0..5 {
            assert_eq!(reader.read(&frame(0x6, 0, 0, &[0; 8])), Progress::Reading);
            assert_eq!(reader.read(&window_update(0, 1)), Progress::Reading);
        }
        assert_eq!(reader.read(&frame(0x1, 0, 1, a)), Progress::Reading);
        assert_eq!(reader.read(&frame(0x9, 0x4, 1, b)), Progress::FirstRequest);
    }
}

#[test]
fn garbage_never_panics() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..2000 {
        let mut bytes = PREFACE.to_vec();
        for _ in 0..200 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            bytes.push(seed as u8);
        }
        let _ = read_whole(&bytes);
    }
}
