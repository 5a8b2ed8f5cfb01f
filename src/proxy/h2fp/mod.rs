//! The first frames of an HTTP/2 connection, read as they pass on their way to pingora's
//! HTTP/2 layer, which does not expose them: when its first request is whole (the end of its
//! first header block, which ends the connection's head deadline), and its fingerprint
//! (Akamai's format, [`H2Fp`](crate::identity::H2Fp)).
//!
//! - The listener wraps every HTTP/2 connection (TLS with ALPN `h2`, or h2c by prior
//!   knowledge) in a [`FirstFramesStream`], holding its head deadline: a connection whose
//!   first request is not whole within `server.header_timeout` is closed, whatever PING,
//!   SETTINGS or WINDOW_UPDATE frames it sends meanwhile.
//! - The wrapper hands every read to a `FrameReader` (`frames`), which walks the frame headers
//!   to the end of the first header block, and stops looking then: from then on a read costs
//!   one branch. When something asks for the fingerprint (the config's `wants_h2fp`), it also
//!   keeps, within fixed caps, the parts of the preface, SETTINGS, WINDOW_UPDATE, PRIORITY and
//!   the first header block the fingerprint needs (`parts`; pseudo-header order: `pseudo`,
//!   HPACK-decoded); past its caps it declines ([`H2fpDeclined`](crate::identity::H2fpDeclined)).
//! - The fingerprint, or why it was declined, is registered for the connection (`registry`)
//!   before the bytes of that block reach pingora, so the connection's first request, and every
//!   later one, finds it: [`connection_h2fp`] from the request's digest. The entry goes with
//!   the stream.
//!
//! Choices, where published implementations differ: SETTINGS are those of the first SETTINGS
//! frame that is not an ACK, in the order sent; the WINDOW_UPDATE is the first one on stream 0
//! before the first HEADERS (`00` when none); PRIORITY lists the PRIORITY frames before the
//! first HEADERS, with their weight written as 1–256 (the wire value plus one, as Akamai's
//! paper and nginx-ssl-fingerprint write it: Firefox's `3:0:0:201`), and not the priority
//! fields of the HEADERS frame itself (Chrome sends those, and its published fingerprint has
//! `0` there); the pseudo-header letters are `m`, `a`, `s`, `p` (`:protocol` has none).

mod frames;
mod parts;
mod pseudo;
mod registry;
mod stream;

pub use registry::connection_h2fp;
pub use stream::{first_frames, FirstFrames, FirstFramesStream};

#[cfg(test)]
mod tests;
