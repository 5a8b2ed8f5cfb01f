//! Request paths in the one form policies match on, so that `//sendCaptcha`, `/%73endCaptcha`
//! and `/a/../sendCaptcha` cannot slip past a route written `/sendCaptcha`.
//!
//! [`normalize_path`] applies RFC 3986 §6.2.2 to the URI path (no query):
//! - a percent-encoded unreserved character (`ALPHA / DIGIT / - . _ ~`) is decoded (`%73` → `s`);
//!   every other percent-encoding is kept, with uppercase hex (`%c3%a9` → `%C3%A9`);
//! - a raw character a path may not hold (space, `"`, `<`, `>`, `^`, `` ` ``, `{`, `|`, `}`,
//!   `[`, `]`, `?`, `#`, controls, non-ASCII) is percent-encoded, so both spellings are one;
//! - repeated slashes are merged, then dot segments removed (§5.2.4; `/..` is `/`); a path that
//!   ended in a slash or a dot segment keeps one trailing slash (`/a/.` → `/a/`).
//!
//! Slashes and backslashes follow one rule: only a raw `/` separates segments. An encoded slash
//! (`%2F`, `%2f`) or backslash (`%5C`) is kept encoded (uppercase) inside its segment, so
//! `/x%2fy` is `/x%2Fy`, one segment. A raw `\`, which some backends read as `/` and others do
//! not, is refused, as are a path not starting with `/` (other than `*`) and a `%` not followed
//! by two hex digits: the proxy answers those with 400.

use std::borrow::Cow;

/// Why a request path has no normal form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The path neither starts with `/` nor is `*`.
    #[error("the path does not start with `/`")]
    NotAbsolute,
    /// The path holds a raw backslash.
    #[error("the path holds a backslash")]
    Backslash,
    /// A `%` is not followed by two hex digits.
    #[error("the path holds a `%` not followed by two hex digits")]
    BadPercent,
}

/// The normal form of request path `path` (see the module doc). An already normal path, the
/// common case, is borrowed as is.
pub fn normalize_path(path: &str) -> Result<Cow<'_, str>, PathError> {
    if path == "*" || is_normal(path) {
        return Ok(Cow::Borrowed(path));
    }
    let rest = path.strip_prefix('/').ok_or(PathError::NotAbsolute)?;
    if rest.contains('\\') {
        return Err(PathError::Backslash);
    }
    rebuild(rest).map(Cow::Owned)
}

/// The normal form of the path whose text after the leading `/` is `rest`: each segment
/// written canonically, then empty and `.` segments dropped and `..` dropping the one before.
fn rebuild(rest: &str) -> Result<String, PathError> {
    let mut kept: Vec<String> = Vec::new();
    let mut trailing_slash = false;
    for raw in rest.split('/') {
        let segment = canonical_segment(raw)?;
        trailing_slash = matches!(segment.as_str(), "" | "." | "..");
        match segment.as_str() {
            "" | "." => {}
            ".." => {
                kept.pop();
            }
            _ => kept.push(segment),
        }
    }
    Ok(join(&kept, trailing_slash))
}

/// `/` + the segments joined by `/`, with a trailing `/` when asked (or when there are none).
fn join(segments: &[String], trailing_slash: bool) -> String {
    let mut out = String::with_capacity(segments.iter().map(|s| s.len() + 1).sum::<usize>() + 1);
    for segment in segments {
        out.push('/');
        out.push_str(segment);
    }
    if out.is_empty() || trailing_slash {
        out.push('/');
    }
    out
}

/// Whether `path` is already its own normal form: it starts with `/`, no segment but the last
/// is empty, none is `.` or `..`, and every byte is written canonically.
fn is_normal(path: &str) -> bool {
    let Some(rest) = path.strip_prefix('/') else {
        return false;
    };
    let mut segments = rest.split('/').peekable();
    while let Some(segment) = segments.next() {
        let empty_inside = segment.is_empty() && segments.peek().is_some();
        let canonical = pieces(segment).all(|p| p.is_ok_and(|p| p.is_canonical()));
        if empty_inside || segment == "." || segment == ".." || !canonical {
            return false;
        }
    }
    true
}

/// `raw` with every byte written canonically.
fn canonical_segment(raw: &str) -> Result<String, PathError> {
    let mut out = String::with_capacity(raw.len());
    for piece in pieces(raw) {
        piece?.push_canonical(&mut out);
    }
    Ok(out)
}

/// One byte of a segment as written.
#[derive(Debug, Clone, Copy)]
enum Piece {
    /// Written as itself.
    Raw(u8),
    /// Written `%XX`; `upper` when neither hex digit is lowercase.
    Encoded { byte: u8, upper: bool },
}

/// The bytes of `segment` as written; an error for a `%` without two hex digits after it.
fn pieces(segment: &str) -> impl Iterator<Item = Result<Piece, PathError>> + '_ {
    let bytes = segment.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        let &b = bytes.get(i)?;
        if b != b'%' {
            i += 1;
            return Some(Ok(Piece::Raw(b)));
        }
        let piece = match bytes.get(i + 1..i + 3) {
            Some(&[hi, lo]) => hex_pair(hi, lo).map(|byte| Piece::Encoded {
                byte,
                upper: is_upper_hex(hi) && is_upper_hex(lo),
            }),
            _ => None,
        };
        i += 3;
        Some(piece.ok_or(PathError::BadPercent))
    })
}

impl Piece {
    /// Whether this byte is written as the normal form writes it.
    fn is_canonical(self) -> bool {
        match self {
            Piece::Raw(b) => is_raw_pchar(b),
            Piece::Encoded { byte, upper } => upper && !is_unreserved(byte),
        }
    }

    /// Appends this byte as the normal form writes it: raw if a path may hold it raw (and, if
    /// it came encoded, it is unreserved), else `%XX` in uppercase.
    fn push_canonical(self, out: &mut String) {
        const HEX: &[u8; 16] = b"0123456789ABCDEF";
        match self {
            Piece::Raw(b) if is_raw_pchar(b) => out.push(char::from(b)),
            Piece::Encoded { byte, .. } if is_unreserved(byte) => out.push(char::from(byte)),
            Piece::Raw(byte) | Piece::Encoded { byte, .. } => {
                out.push('%');
                out.push(char::from(HEX[usize::from(byte >> 4)]));
                out.push(char::from(HEX[usize::from(byte & 0xf)]));
            }
        }
    }
}

/// RFC 3986 unreserved: `ALPHA / DIGIT / - . _ ~`.
fn is_unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~')
}

/// A byte a path segment may hold raw (RFC 3986 `pchar` but `%`): unreserved, sub-delimiters,
/// `:` and `@`. A reserved character that came encoded stays encoded (§2.2: encoding it
/// changes its meaning).
fn is_raw_pchar(byte: u8) -> bool {
    is_unreserved(byte)
        || matches!(
            byte,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'@'
        )
}

fn is_upper_hex(byte: u8) -> bool {
    byte.is_ascii_digit() || (b'A'..=b'F').contains(&byte)
}

/// The byte written by hex digits `hi` and `lo` (either case).
fn hex_pair(hi: u8, lo: u8) -> Option<u8> {
    let digit = |b: u8| char::from(b).to_digit(16);
    // Two hex digits make at most 0xff: the conversion cannot fail.
    u8::try_from(digit(hi)? * 16 + digit(lo)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normal(path: &str) -> String {
        normalize_path(path).unwrap().into_owned()
    }

    #[test]
    fn path_spellings_of_one_route_are_one_path() {
        for path in [
            "//sendCaptcha",
            "/%73endCaptcha",
            "/%73%65%6E%64Captcha",
            "/./sendCaptcha",
            "/a/../sendCaptcha",
            "/a/b/../../sendCaptcha",
            "/../sendCaptcha",
            "/%2e%2e/sendCaptcha",
            "/%2E/sendCaptcha",
            "/a/.%2e/sendCaptcha",
            "///a//..//sendCaptcha",
        ] {
            assert_eq!(normal(path), "/sendCaptcha", "{path}");
        }
    }

    #[test]
    fn dot_segments_never_climb_above_the_root() {
        assert_eq!(normal("/.."), "/");
        assert_eq!(normal("/../.."), "/");
        assert_eq!(normal("/%2e%2e/x"), "/x");
        assert_eq!(normal("/%2E/x"), "/x");
        assert_eq!(normal("/."), "/");
        assert_eq!(normal("//"), "/");
    }

    #[test]
    fn a_trailing_slash_or_dot_segment_leaves_one_slash() {
        assert_eq!(normal("/sendCaptcha/"), "/sendCaptcha/");
        assert_eq!(normal("/sendCaptcha//"), "/sendCaptcha/");
        assert_eq!(normal("/a/."), "/a/");
        assert_eq!(normal("/a/b/.."), "/a/");
        assert_eq!(normal("/a/b/%2E%2E"), "/a/");
    }

    #[test]
    fn encoded_slashes_and_backslashes_stay_inside_their_segment() {
        assert_eq!(normal("/x%2fy"), "/x%2Fy");
        assert_eq!(normal("/x%2Fy"), "/x%2Fy");
        assert_eq!(normal("/x%5cy"), "/x%5Cy");
        assert_eq!(
            normal("/a/x%2f..%2f/b"),
            "/a/x%2F..%2F/b",
            "not dot segments"
        );
        assert_eq!(normal("/a/%2e%2e%2fb"), "/a/..%2Fb");
    }

    #[test]
    fn other_encodings_keep_their_meaning_in_uppercase() {
        assert_eq!(normal("/caf%c3%a9"), "/caf%C3%A9");
        assert_eq!(
            normal("/a%3ab"),
            "/a%3Ab",
            "an encoded `:` is not a raw one"
        );
        assert_eq!(normal("/%7e%41%2d%5F%2E"), "/~A-_.");
        assert_eq!(normal("/a%00b"), "/a%00b");
        assert_eq!(normal("/%25"), "/%25");
        assert_eq!(normal("/%2541"), "/%2541", "decoded once only");
    }

    #[test]
    fn raw_bytes_a_path_may_not_hold_are_encoded() {
        assert_eq!(normal("/café"), "/caf%C3%A9");
        assert_eq!(normal("/a b"), "/a%20b");
        assert_eq!(normal("/{x}|\"^`"), "/%7Bx%7D%7C%22%5E%60");
        assert_eq!(normal("/[::1]"), "/%5B::1%5D");
    }

    #[test]
    fn backslashes_relative_paths_and_bad_percents_are_refused() {
        assert_eq!(normalize_path("/a\\b"), Err(PathError::Backslash));
        assert_eq!(normalize_path("\\sendCaptcha"), Err(PathError::NotAbsolute));
        assert_eq!(
            normalize_path("/..\\sendCaptcha"),
            Err(PathError::Backslash)
        );
        assert_eq!(normalize_path("sendCaptcha"), Err(PathError::NotAbsolute));
        assert_eq!(normalize_path(""), Err(PathError::NotAbsolute));
        assert_eq!(normalize_path("**"), Err(PathError::NotAbsolute));
        for bad in ["/%", "/%4", "/a%zz", "/%%41", "/%+1", "/%é1", "/x/%4/"] {
            assert_eq!(normalize_path(bad), Err(PathError::BadPercent), "{bad}");
        }
    }

    #[test]
    fn normal_paths_are_borrowed_unchanged() {
        for path in [
            "/",
            "*",
            "/sendCaptcha",
            "/sendCaptcha/",
            "/api/v1/users/42",
            "/a.b/c..d/.e/..f/...",
            "/x%2Fy",
            "/caf%C3%A9",
            "/a%3Ab",
            "/~user/-_./",
            "/!$&'()*+,;=:@",
            "/%25",
            "/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p",
        ] {
            assert!(
                matches!(normalize_path(path), Ok(Cow::Borrowed(p)) if p == path),
                "{path}"
            );
        }
    }
}
