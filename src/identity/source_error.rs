//! Why a source string of the config (`header:x-api-key`, `path`, …) is not understood: shared
//! by the sources and the request facts they may name, so neither file needs the other's.

/// A source string from the config that is not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// The kind before `:` is not a known kind.
    #[error("unknown identity source `{0}`; expected header:<name>, cookie:<name>, query:<name>, jwt:<claim>, ip, path, method, host or const:<name>")]
    UnknownKind(String),
    /// The name after `:` is empty or not valid for its kind.
    #[error("identity source `{0}` needs a valid name after `:`")]
    BadName(String),
}
