//! The HTTP/2 fingerprint of a client, in the format Akamai published (Shuster & Segal,
//! "Passive Fingerprinting of HTTP/2 Clients", Black Hat EU 2017):
//! `1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p` is the SETTINGS the client sent first
//! (`id:value`, in order, `;`-separated), the increment of its first connection-level
//! WINDOW_UPDATE (`00` when none came before its first HEADERS), its PRIORITY frames
//! (`stream:exclusive:depends_on:weight`, `,`-separated, `0` when none) and the order of the
//! pseudo-headers of its first request (`m`ethod, `a`uthority, `s`cheme, `p`ath).

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// The longest fingerprint kept: what a client sends beyond it is not looked at (a client
/// sending hundreds of SETTINGS entries or PRIORITY frames gets a fingerprint cut here).
pub const MAX_H2FP_LEN: usize = 512;

/// An HTTP/2 client fingerprint (Akamai's format), checked when made; cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct H2Fp(Arc<str>);

/// Text that is not an HTTP/2 fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not an HTTP/2 fingerprint (Akamai's format, like \
     \"1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p\")"
)]
pub struct BadH2Fp(pub String);

/// Why Floodgate read no fingerprint from an HTTP/2 connection it was asked to read: a real
/// client never gives one of these, so a request on such a connection is scored as if its
/// fingerprint were not its User-Agent's browser's (`ua-h2-mismatch`), never better than one
/// whose fingerprint was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum H2fpDeclined {
    /// More frames came before the first request than the reader looks at (1,024).
    Frames,
    /// More bytes came before the first request than the reader looks at (64 KiB).
    Bytes,
    /// The first request's HEADERS frame does not hold together (its padding past its end).
    Malformed,
}

impl H2fpDeclined {
    /// The word in the access log (`h2fp_declined=frames`).
    pub fn word(self) -> &'static str {
        match self {
            Self::Frames => "frames",
            Self::Bytes => "bytes",
            Self::Malformed => "malformed",
        }
    }
}

impl fmt::Display for H2fpDeclined {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

impl H2Fp {
    /// The fingerprint as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for H2Fp {
    type Err = BadH2Fp;

    /// Four `|`-separated parts of digits, `:`, `;` and `,` (the last part pseudo-header
    /// letters `m`, `a`, `s`, `p` and `,`), at most [`MAX_H2FP_LEN`] characters.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || BadH2Fp(text.chars().take(64).collect());
        let parts: Vec<&str> = text.split('|').collect();
        let numeric = |part: &str| {
            part.bytes()
                .all(|b| b.is_ascii_digit() || b":;,".contains(&b))
        };
        let pseudo = |part: &str| part.bytes().all(|b| b"masp,".contains(&b));
        let shape = text.len() <= MAX_H2FP_LEN
            && parts.len() == 4
            && parts[..3].iter().all(|p| numeric(p))
            && !parts[1].is_empty()
            && !parts[2].is_empty()
            && pseudo(parts[3]);
        match shape {
            true => Ok(Self(text.into())),
            false => Err(bad()),
        }
    }
}

impl fmt::Display for H2Fp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_read_back_and_are_checked() {
        for good in [
            "1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p",
            "3:100;4:65536|00|0|m,s,a,p",
            "|00|0|",
            "1:4096|00|3:0:0:201,5:0:0:101|m,p,a,s",
        ] {
            assert_eq!(good.parse::<H2Fp>().unwrap().as_str(), good);
        }
        let long = format!("{}|00|0|m,a,s,p", "1:1;".repeat(200));
        for bad in [
            "",
            "1:65536",
            "1:x|00|0|m",
            "1:1|00|0|m,x",
            "1:1||0|m",
            long.as_str(),
        ] {
            assert!(bad.parse::<H2Fp>().is_err(), "{bad}");
        }
    }
}
