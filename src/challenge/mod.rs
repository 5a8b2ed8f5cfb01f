//! The challenge: a page a browser solves once (`refresh`, `pow`) for a signed pass that
//! turns an anonymous client into a caller the gate can name and limit (the source `pass`).
//! The gate decides who is challenged; this room opens passes before it decides (`token`),
//! tells which requests a page can reach (`reach`, `accept`), renders the pages it asks for
//! (`page`, `template`; gzipped when the client takes it: `encoding`, `gzip`), and receives
//! solutions (`redeem`: `pow`, `target`, nonces used once in the limiter's ledger), and takes
//! Privacy Pass tokens from trusted issuers instead (`tokens`).

mod accept;
mod earned;
mod encoding;
mod gzip;
mod page;
mod pow;
mod reach;
mod redeem;
mod room;
mod settings;
mod target;
mod template;
mod token;
mod tokens;

pub use earned::Earned;
pub use encoding::Coding;
pub use page::{PageInput, Pages};
pub use pow::{solved, MAX_SOLUTION_DIGITS};
pub use reach::{PageRules, PatternError, DEFAULT_NEVER_PATHS};
pub use redeem::Redemption;
pub use room::{Challenges, Page, PageError, Visitor};
pub use settings::ChallengeSettings;
pub use target::{original_target, return_target, BadTarget, MAX_TARGET_LEN};
pub use token::{NoRandomness, Nonce, Signer, TokenError, TOKEN_LEN};
pub use tokens::{Redeeming, Tokens, TokensError, PRIVACY_PASS_POLICY};
