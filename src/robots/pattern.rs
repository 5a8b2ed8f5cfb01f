//! A robots.txt rule's path pattern and the paths it is matched against, both in RFC 9309
//! §2.2.2's form, and the match itself (§2.2.3: `*` is any run of characters, a final `$`
//! ends the path).
//!
//! The form is RFC 3986's normal one, as the proxy's paths are written: a percent-encoded
//! unreserved character (`ALPHA / DIGIT / - . _ ~`) is decoded (`%61` → `a`, so `/%61dmin`
//! cannot slip past `Disallow: /admin`); every other percent-encoding is kept, uppercase
//! (`%2f` → `%2F`); a byte a URI may not hold raw (non-ASCII, controls, space, `"`, `<`, `>`,
//! `\`, `^`, `` ` ``, `{`, `|`, `}`, `[`, `]`) is percent-encoded (`ツ` → `%E3%83%84`). A
//! reserved character keeps its spelling: raw stays raw, encoded stays encoded.
//!
//! Matching is linear: the pieces between `*`s are found leftmost, in turn, with no
//! backtracking (a leftmost placement never blocks a later piece).

use std::borrow::Cow;

/// A rule's pattern, normalised and split at its `*`s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pattern {
    /// The literal pieces between `*`s (the first anchored at the path's start); at least one.
    pieces: Box<[Box<str>]>,
    /// Whether the pattern ended in `$`: the last piece must end the path.
    anchored: bool,
    /// The normalised pattern's length in octets, `*` and `$` included: its priority.
    len: usize,
}

impl Pattern {
    /// The pattern written `text`; `None` for an empty one (it matches nothing).
    pub(crate) fn new(text: &str) -> Option<Pattern> {
        let text = normalise(text);
        if text.is_empty() {
            return None;
        }
        let (body, anchored) = match text.strip_suffix('$') {
            Some(body) => (body, true),
            None => (&*text, false),
        };
        let mut pieces: Vec<Box<str>> = Vec::new();
        for (i, piece) in body.split('*').enumerate() {
            // Empty pieces between stars (`**`) change nothing; the first and last mark where
            // the pattern is anchored, so they stay.
            if i == 0 || !piece.is_empty() {
                pieces.push(piece.into());
            }
        }
        if body.ends_with('*') {
            pieces.push("".into());
        }
        Some(Pattern {
            pieces: pieces.into_boxed_slice(),
            anchored,
            len: text.len(),
        })
    }

    /// Its priority: the normalised pattern's length (RFC 9309: the match with the most
    /// octets wins).
    pub(crate) fn priority(&self) -> usize {
        self.len
    }

    /// Whether it matches `path` (already in [`normalise`]d form).
    pub(crate) fn matches(&self, path: &str) -> bool {
        let Some((first, rest)) = self.pieces.split_first() else {
            return false;
        };
        let Some(mut tail) = path.strip_prefix(&**first) else {
            return false;
        };
        let Some((last, middle)) = rest.split_last() else {
            return !self.anchored || tail.is_empty();
        };
        for piece in middle {
            match tail.find(&**piece) {
                Some(at) => tail = &tail[at + piece.len()..],
                None => return false,
            }
        }
        match self.anchored {
            true => tail.ends_with(&**last),
            false => tail.contains(&**last),
        }
    }

    /// Whether some path at or below `prefix` (a plain path, normalised) matches: an `Allow`
    /// that does, at least as long as a `Disallow` of `prefix`, lets a crawler fetch there.
    pub(crate) fn reaches(&self, prefix: &str) -> bool {
        let first = &*self.pieces[0];
        let compatible = first.starts_with(prefix) || prefix.starts_with(first);
        let starred = self.pieces.len() > 1;
        match (starred, self.anchored) {
            // After a `*`, every later piece can be placed past the prefix.
            (true, _) | (false, false) => compatible,
            // `/a$` matches `/a` only, which must be at or below the prefix.
            (false, true) => first.starts_with(prefix),
        }
    }
}

/// Whether `Allow: <allow>` lets a crawler fetch `prefix` or a path below it despite
/// `Disallow: <prefix>` (a plain path): it reaches there with a rule at least as long (RFC
/// 9309: the longer rule wins, `Allow` a tie).
pub(crate) fn allow_reaches(allow: &str, prefix: &str) -> bool {
    let (Some(allow), Some(disallow)) = (Pattern::new(allow), Pattern::new(prefix)) else {
        return false;
    };
    allow.priority() >= disallow.priority() && allow.reaches(&normalise(prefix))
}

/// `path` (a pattern or a request's path and query) in RFC 9309 §2.2.2's form (see the
/// module doc); borrowed when it is already.
pub(crate) fn normalise(path: &str) -> Cow<'_, str> {
    let bytes = path.as_bytes();
    if !bytes.iter().enumerate().any(|(i, &b)| changes(bytes, i, b)) {
        return Cow::Borrowed(path);
    }
    let mut out = String::with_capacity(path.len() + 8);
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match (b, hex_at(bytes, i + 1)) {
            (b'%', Some(byte)) if is_unreserved(byte) => {
                out.push(char::from(byte));
                i += 3;
            }
            (b'%', Some(byte)) => {
                push_encoded(&mut out, byte);
                i += 3;
            }
            _ if must_encode(b) => {
                push_encoded(&mut out, b);
                i += 1;
            }
            _ => {
                out.push(char::from(b));
                i += 1;
            }
        }
    }
    out.into()
}

/// Whether byte `b` at `i` of `bytes` is written differently in the normal form.
fn changes(bytes: &[u8], i: usize, b: u8) -> bool {
    match (b, hex_at(bytes, i + 1)) {
        (b'%', Some(byte)) => is_unreserved(byte) || bytes[i + 1..i + 3] != upper_hex(byte),
        _ => must_encode(b),
    }
}

/// Appends `%XX`, uppercase.
fn push_encoded(out: &mut String, b: u8) {
    out.push('%');
    for digit in upper_hex(b) {
        out.push(char::from(digit));
    }
}

/// The byte written by the two hex digits at `at` of `bytes`, if there are two.
fn hex_at(bytes: &[u8], at: usize) -> Option<u8> {
    let digit = |b: &u8| char::from(*b).to_digit(16);
    match bytes.get(at..at + 2) {
        Some([hi, lo]) => u8::try_from(digit(hi)? * 16 + digit(lo)?).ok(),
        _ => None,
    }
}

fn upper_hex(b: u8) -> [u8; 2] {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    [HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]]
}

/// RFC 3986 unreserved: `ALPHA / DIGIT / - . _ ~`.
fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// A byte a URI may not hold raw.
fn must_encode(b: u8) -> bool {
    !b.is_ascii_graphic()
        || matches!(
            b,
            b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'}' | b'[' | b']'
        )
}

#[cfg(test)]
mod tests;
