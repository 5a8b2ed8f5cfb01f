//! The challenge a browser solves once to earn a pass: its pages (`refresh`, `pow`), the
//! server's check of a proof of work, the safe way back to the original URL, and which
//! requests can be shown a page at all.

mod accept;
mod page;
mod pow;
mod reach;
mod target;
mod template;

pub use page::{PageInput, Pages};
pub use pow::{solved, MAX_SOLUTION_DIGITS};
pub use reach::{PageRules, PatternError, DEFAULT_NEVER_PATHS};
pub use target::{original_target, return_target, BadTarget, MAX_TARGET_LEN};
