//! An error and its causes, for a log line or a message: `reqwest` says only
//! `error sending request for url (…)`, and why (`invalid peer certificate: UnknownIssuer`) is
//! further down its `source()` chain. [`Causes`] writes the error, then each cause whose text
//! the line does not hold yet (a wrapper that already quotes its cause is not repeated),
//! joined by `: `.

use std::error::Error;
use std::fmt;

/// `error` with its chain of causes, for `Display`.
#[derive(Clone, Copy)]
pub struct Causes<'e>(pub &'e (dyn Error + 'static));

impl fmt::Display for Causes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut line = self.0.to_string();
        let mut next = self.0.source();
        while let Some(cause) = next {
            let said = cause.to_string();
            if !line.contains(&said) {
                line.push_str(": ");
                line.push_str(&said);
            }
            next = cause.source();
        }
        f.write_str(&line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    enum Chain {
        #[error("error sending request")]
        Outer(#[source] Box<Chain>),
        #[error("download failed: {0}")]
        Quoting(#[source] Box<Chain>),
        #[error("invalid peer certificate: UnknownIssuer")]
        Root,
    }

    #[test]
    fn every_cause_is_written_once() {
        let root = Chain::Root;
        assert_eq!(
            Causes(&root).to_string(),
            "invalid peer certificate: UnknownIssuer"
        );
        let outer = Chain::Outer(Box::new(Chain::Quoting(Box::new(Chain::Root))));
        assert_eq!(
            Causes(&outer).to_string(),
            "error sending request: download failed: invalid peer certificate: UnknownIssuer"
        );
    }
}
