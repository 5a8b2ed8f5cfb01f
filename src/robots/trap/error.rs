//! Why a trap table could not answer. Nothing here panics: a caller that gets an error from
//! [`Traps::has_read`](super::Traps::has_read) does not ban (a verification that cannot
//! finish never says yes).

use crate::limiter::LimiterError;

/// Why a trap table could not answer.
#[derive(Debug, thiserror::Error)]
pub enum TrapError {
    /// Redis did not answer, or answered with an error.
    #[error("the trap's tables in redis: {0}")]
    Store(#[from] LimiterError),
    /// `lua/traps.lua` answered something it never answers.
    #[error("traps.lua answered {0}")]
    Answer(String),
    /// The trap path kept in Redis is not a path (someone stored another value).
    #[error("the trap path kept in redis is not a path: {0:?}")]
    BadPath(String),
    /// The file the trap path is kept in cannot be read or written.
    #[error("cannot keep the trap path in {path}: {why}")]
    PathFile {
        /// The file.
        path: String,
        /// Why.
        why: String,
    },
    /// The operating system gave no randomness for a trap path.
    #[error("no randomness for a trap path: {0}")]
    NoRandomness(String),
}
