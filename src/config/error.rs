//! Config errors, each located as `file:line:column: message`.

use crate::location::line_and_column;
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
