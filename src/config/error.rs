//! Config errors, each located as `file:line:column: message`.

use std::ops::Range;
use std::path::{Path, PathBuf};

/// Why a config could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What reading it said.
        source: std::io::Error,
    },
    /// The file was read but something in it is wrong.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line of the offending text.
        line: usize,
        /// 1-based column (in characters) of the offending text.
        column: usize,
        /// What is wrong, naming the key.
        message: String,
    },
}

impl ConfigError {
    /// An error about the text at byte range `span` of `text` (the start of the file if none).
    pub fn at(path: &Path, text: &str, span: Option<Range<usize>>, message: String) -> Self {
        let (line, column) = line_and_column(text, span.map_or(0, |s| s.start));
        ConfigError::Invalid {
            path: path.to_owned(),
            line,
            column,
            message,
        }
    }
}

/// The 1-based line and column of byte `offset` in `text`.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_become_lines_and_columns() {
        let text = "a = 1\nbb = 2\n";
        assert_eq!(line_and_column(text, 0), (1, 1));
        assert_eq!(line_and_column(text, 6), (2, 1));
        assert_eq!(line_and_column(text, 11), (2, 6));
        assert_eq!(line_and_column(text, 999), (3, 1));
    }
}
