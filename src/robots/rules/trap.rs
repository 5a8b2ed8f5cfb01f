//! [`RobotsTxt::with_trap`]: the served copy of a file with the trap disallowed in every
//! group, its text otherwise as the backend wrote it.

use super::collect::Group;
use super::{Kind, RobotsTxt, Rule};
use crate::robots::pattern::Pattern;

impl RobotsTxt {
    /// This file with `Disallow: <trap>` written after the `User-agent` lines of every group
    /// (and, when no group names `*`, a `User-agent: *` group holding only that rule added at
    /// the end), so every crawler that reads it is told to keep out of the trap. The rest of
    /// the text is unchanged. A `trap` that is not a plain path (a `/`, then printable ASCII
    /// but `*`, `$`, `?` and `#`) is not written: the file is returned as it is.
    pub fn with_trap(&self, trap: &str) -> RobotsTxt {
        let pattern = match is_plain_path(trap) {
            true => Pattern::new(trap),
            false => None,
        };
        let Some(pattern) = pattern else {
            return self.clone();
        };
        let eol = match self.text.contains("\r\n") {
            true => "\r\n",
            false => "\n",
        };
        let line = format!("{eol}Disallow: {trap}");
        let ends = line_ends(&self.text[self.parsed.clone()]);
        let mut text =
            String::with_capacity(self.text.len() + line.len() * (self.groups.len() + 2));
        let mut copied = 0;
        let mut groups = self.groups.clone();
        for (i, group) in groups.iter_mut().enumerate() {
            let at = self.parsed.start + ends[group.agents_end - 1];
            text.push_str(&self.text[copied..at]);
            text.push_str(&line);
            copied = at;
            group.agents_end += i;
            group.add(Rule {
                pattern: pattern.clone(),
                kind: Kind::Disallow,
            });
        }
        text.push_str(&self.text[copied..]);
        let added = text.len() - self.text.len();
        let mut parsed = self.parsed.start..self.parsed.end + added;
        let mut any = self.any.clone();
        if any.is_empty() {
            let agents_end = append_any_group(&mut text, parsed.start, eol, trap);
            parsed.end = text.len();
            any = Box::new([groups.len()]);
            let mut group = Group {
                agents_end,
                ..Group::default()
            };
            group.add(Rule {
                pattern,
                kind: Kind::Disallow,
            });
            groups.push(group);
        } else if self.parsed.end == self.text.len() {
            parsed.end = text.len();
        }
        RobotsTxt {
            text: text.into(),
            parsed,
            groups,
            named: self.named.clone(),
            tokens: self.tokens.clone(),
            any,
        }
    }
}

/// Appends a `User-agent: *` group disallowing `trap` to `text`, after a blank line; the line
/// number (from 1, counted from `start`) of its `User-agent` line.
fn append_any_group(text: &mut String, start: usize, eol: &str, trap: &str) -> usize {
    if !text[start..].is_empty() {
        if !text.ends_with(['\n', '\r']) {
            text.push_str(eol);
        }
        text.push_str(eol);
    }
    let agents_end = line_ends(&text[start..]).len();
    text.push_str(&format!("User-agent: *{eol}Disallow: {trap}{eol}"));
    agents_end
}

/// Whether `trap` can be written as a rule and read back as the same plain prefix.
fn is_plain_path(trap: &str) -> bool {
    trap.starts_with('/')
        && trap
            .bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b'*' | b'$' | b'?' | b'#'))
}

/// Where each line's content ends (before its line break), line 1 first, as Google's parser
/// splits lines: at `\n`, `\r` or `\r\n`. The last line (maybe empty) ends at the end.
fn line_ends(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut ends = Vec::new();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\r' | b'\n' => {
                ends.push(i);
                let crlf = b == b'\r' && bytes.get(i + 1) == Some(&b'\n');
                i += if crlf { 2 } else { 1 };
            }
            _ => i += 1,
        }
    }
    ends.push(bytes.len());
    ends
}
