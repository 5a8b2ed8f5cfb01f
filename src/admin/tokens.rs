//! The control API's tokens: `admin.token_file`, one `name:token` per line (`#` comments and
//! blank lines skipped), read at start and on every reload. Tokens are kept only as BLAKE3
//! digests and compared digest to digest (BLAKE3's equality is constant-time), so neither a
//! token nor its length shows in timing, logs or answers; a call is known by its token's name.

use super::attempts::Attempts;
use arc_swap::ArcSwap;
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The shortest token accepted: 16 characters.
pub const MIN_TOKEN_LEN: usize = 16;

/// What a call's `Authorization` header earns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// No token file: the control API is off.
    Off,
    /// No bearer token, or not one of the file's.
    Refused,
    /// The token named so.
    Allowed(String),
    /// Not tried: the peer failed too often lately and must wait this long.
    Slowed(Duration),
}

/// Why the token file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    /// It cannot be read.
    #[error("cannot read the token file {0}: {1}")]
    Read(String, std::io::Error),
    /// A line is not `name:token` with a token of at least 16 characters.
    #[error("{0}:{1}: expected `name:token` with a name of letters, digits, `-_.` and a token of at least 16 characters")]
    Line(String, usize),
}

/// The tokens in force, swapped whole on reload.
#[derive(Default)]
pub struct Tokens {
    current: ArcSwap<Option<Vec<(String, blake3::Hash)>>>,
    attempts: Attempts,
}

impl Tokens {
    /// The tokens of `file`, or none (the control API off).
    pub fn load(file: Option<&Path>) -> Result<Self, TokenFileError> {
        let tokens = Self::default();
        tokens.reload(file)?;
        Ok(tokens)
    }

    /// Reads `file` again (a reload); on error the tokens in force stay.
    pub fn reload(&self, file: Option<&Path>) -> Result<(), TokenFileError> {
        let parsed = match file {
            Some(path) => Some(read(path)?),
            None => None,
        };
        self.current.store(Arc::new(parsed));
        Ok(())
    }

    /// What the `Authorization` header `header` of a call from `peer` at `now` earns: a peer
    /// that failed too often lately is slowed before its token is looked at (`attempts.rs`).
    pub fn check_from(&self, header: Option<&[u8]>, peer: Option<IpAddr>, now: Instant) -> Check {
        if let Err(wait) = self.attempts.admit(peer, now) {
            return Check::Slowed(wait);
        }
        let check = self.check(header);
        if check == Check::Refused {
            self.attempts.failed(peer, now);
        }
        check
    }

    /// What the `Authorization` header `header` earns.
    pub fn check(&self, header: Option<&[u8]>) -> Check {
        let current = self.current.load();
        let Some(tokens) = current.as_ref() else {
            return Check::Off;
        };
        let presented = header
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| h.trim().split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| blake3::hash(token.trim().as_bytes()));
        let Some(presented) = presented else {
            return Check::Refused;
        };
        // Every token is compared, so the time taken does not say which one matched.
        let mut found = None;
        for (name, digest) in tokens {
            if *digest == presented && found.is_none() {
                found = Some(name.clone());
            }
        }
        found.map_or(Check::Refused, Check::Allowed)
    }
}

fn read(path: &Path) -> Result<Vec<(String, blake3::Hash)>, TokenFileError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| TokenFileError::Read(shown.clone(), e))?;
    let mut tokens = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || TokenFileError::Line(shown.clone(), number + 1);
        let (name, token) = line.split_once(':').ok_or_else(bad)?;
        let (name, token) = (name.trim(), token.trim());
        let name_ok = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
        if !name_ok || token.len() < MIN_TOKEN_LEN {
            return Err(bad());
        }
        tokens.push((name.to_owned(), blake3::hash(token.as_bytes())));
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Result<Tokens, TokenFileError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens");
        std::fs::write(&path, text).unwrap();
        Tokens::load(Some(&path))
    }

    #[test]
    fn a_listed_token_is_known_by_its_name_and_any_other_is_refused() {
        let t = tokens("# ops\nops:0123456789abcdef\n\nci: fedcba9876543210 \n").unwrap();
        assert_eq!(
            t.check(Some(b"Bearer 0123456789abcdef")),
            Check::Allowed("ops".into())
        );
        assert_eq!(
            t.check(Some(b"bearer fedcba9876543210")),
            Check::Allowed("ci".into())
        );
        assert_eq!(t.check(Some(b"Bearer 0123456789abcdeX")), Check::Refused);
        assert_eq!(t.check(Some(b"Basic b3BzOnNlY3JldA==")), Check::Refused);
        assert_eq!(t.check(None), Check::Refused);
        assert_eq!(Tokens::load(None).unwrap().check(None), Check::Off);
    }

    #[test]
    fn a_peer_failing_too_often_is_slowed_before_its_token_is_looked_at() {
        let t = tokens("ops:0123456789abcdef\n").unwrap();
        let (peer, now) = (Some(IpAddr::from([192, 0, 2, 1])), Instant::now());
        for _ in 0..super::super::attempts::FREE_FAILURES {
            assert_eq!(
                t.check_from(Some(b"Bearer wrong"), peer, now),
                Check::Refused
            );
        }
        let good = Some(b"Bearer 0123456789abcdef".as_slice());
        assert!(matches!(t.check_from(good, peer, now), Check::Slowed(_)));
        let other = Some(IpAddr::from([192, 0, 2, 2]));
        assert_eq!(t.check_from(good, other, now), Check::Allowed("ops".into()));
        let later = now + super::super::attempts::SPACING;
        assert_eq!(
            t.check_from(good, peer, later),
            Check::Allowed("ops".into())
        );
    }

    #[test]
    fn a_bad_line_is_named() {
        let Err(e) = tokens("ops:short\n") else {
            panic!("a short token is refused");
        };
        assert!(e.to_string().ends_with(":1: expected `name:token` with a name of letters, digits, `-_.` and a token of at least 16 characters"), "{e}");
        assert!(tokens("no-colon-here-at-all\n").is_err());
    }
}
