//! Operator text as the audit log writes it: one line whatever was sent. Control characters
//! (and the Unicode line and paragraph separators) are written as escapes (`\n`, `\u001b`),
//! and a backslash as `\\`, so a `reason` cannot forge a second log line or colour a terminal.

use std::fmt::Write;

/// `text` with every control character escaped.
pub(super) fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escaped;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert_eq!(escaped("abuse\nINFO fake"), "abuse\\nINFO fake");
        assert_eq!(escaped("\u{1b}[31mred\r\t"), "\\u001b[31mred\\r\\t");
        assert_eq!(escaped("a\\nb"), "a\\\\nb");
        assert_eq!(escaped("\u{7f}\u{85}\u{2028}"), "\\u007f\\u0085\\u2028");
        assert_eq!(
            escaped("spam from 203.0.113.7 — ok"),
            "spam from 203.0.113.7 — ok"
        );
    }
}
